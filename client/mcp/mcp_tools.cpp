#include "client/mcp/mcp_tools.hpp"

#include "client/commands.hpp"
#include "client/mcp/mcp_protocol.hpp"
#include "client/short_view.hpp"
#include "common/limits.hpp"
#include "client/short_view.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace pybox::client::mcp {

namespace json = boost::json;

namespace {

constexpr std::string_view k_png_signature = "\x89PNG\r\n\x1a\n";

// Schemas are written as JSON text: easier to read, and checked by the unit tests.
constexpr std::string_view k_run_python_input_schema = R"({
  "type": "object",
  "properties": {
    "program": {"type": "string", "description": "Python 3 source, at most 65,536 bytes (UTF-8)."},
    "timeout_s": {"type": "number", "minimum": 0.1, "maximum": 30, "default": 2,
                  "description": "Deadline in seconds; the program is killed when it is reached."},
    "image": {"type": "string", "default": "stdlib",
              "description": "stdlib (Python's standard library only), data (numpy, pandas, matplotlib) or an own image."},
    "files": {"type": "object", "maxProperties": 16,
              "description": "Input files by name (a relative path), placed in the program's working folder; at most 16 files, 262,144 bytes in all. Files the program writes to out/ come back.",
              "additionalProperties": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "base64": {"type": "string"}},
                "additionalProperties": false, "minProperties": 1, "maxProperties": 1}},
    "output_limit": {"type": "integer", "minimum": 1, "maximum": 8192, "default": 4096,
                     "description": "Bytes of stdout and of stderr kept (each)."}
  },
  "required": ["program"],
  "additionalProperties": false
})";

constexpr std::string_view k_receipt_schema = R"({
  "type": "object",
  "description": "The run's receipt, as `pybox exec --json` prints it (docs/receipt.md).",
  "properties": {
    "schema_version": {"type": "integer"},
    "sealed": {"const": true, "description": "A sealed run, in a container made by pyboxd."},
    "isolation": {"const": "container"},
    "identity": {"type": "object", "properties": {"run_id": {"type": "string"}, "image": {"type": "string"}},
                 "required": ["run_id", "image"]},
    "container_id": {"type": ["string", "null"]},
    "submission": {"type": "object"},
    "configured": {"type": "object"},
    "observed": {"type": "object"},
    "capture": {"type": "object",
                "properties": {"stdout": {"type": "string"}, "stdout_encoding": {"enum": ["utf-8", "base64"]},
                               "stdout_truncated": {"type": "boolean"}, "stderr": {"type": "string"},
                               "stderr_encoding": {"enum": ["utf-8", "base64"]}, "stderr_truncated": {"type": "boolean"}},
                "required": ["stdout", "stdout_encoding", "stdout_truncated", "stderr", "stderr_encoding", "stderr_truncated"]},
    "lifecycle": {"type": "object"},
    "cleanup": {"type": "object"},
    "clock_domains": {"type": "object"},
    "unknown": {"type": "object", "additionalProperties": {"type": "boolean"},
                "description": "What PyBox could not know: always final_resource_counters, exact_termination_cause and absolute_clock_alignment, true or false; any other key only when true.",
                "properties": {"final_resource_counters": {"type": "boolean"},
                               "exact_termination_cause": {"type": "boolean"},
                               "absolute_clock_alignment": {"type": "boolean"}},
                "required": ["final_resource_counters", "exact_termination_cause", "absolute_clock_alignment"]},
    "unknown_reasons": {"type": "object", "additionalProperties": {"type": "string"},
                        "description": "Why, for each key of unknown that is true."},
    "files": {"type": ["object", "null"],
              "properties": {"inputs": {"type": "array"}, "outputs": {"type": "array"}, "skipped": {"type": "array"},
                             "errors": {"type": "array", "items": {"type": "string"}}}},
    "explanations": {"type": "array", "items": {"type": "object",
                     "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                     "required": ["code", "message"]}}
  },
  "required": ["schema_version", "identity", "container_id", "submission", "configured", "observed", "capture",
               "lifecycle", "cleanup", "clock_domains", "unknown", "unknown_reasons", "files", "explanations"]
})";

constexpr std::string_view k_image_list_schema = R"({
  "type": "object",
  "properties": {
    "images": {"type": "array", "items": {"type": "object",
               "properties": {"name": {"type": "string"}, "image_id": {"type": "string"},
                              "recipe_sha256": {"type": "string"}, "built_at": {"type": "string"},
                              "present": {"type": ["boolean", "null"]}},
               "required": ["name", "image_id", "recipe_sha256", "built_at"]}}
  },
  "required": ["images"]
})";

Error bad_argument(std::string message)
{
    return make_error("invalid_arguments", std::move(message));
}

Expected<std::vector<proto::FileContent>> read_files(const json::value& value)
{
    if (!value.is_object()) return bad_argument("\"files\" must be an object of name -> {\"text\"} or {\"base64\"}.");
    const auto& files = value.as_object();
    if (files.size() > limits::k_mcp_max_input_files)
        return bad_argument("\"files\" has " + std::to_string(files.size()) + " files; at most " +
                            std::to_string(limits::k_mcp_max_input_files) + " are accepted.");
    std::vector<proto::FileContent> inputs;
    std::size_t total = 0;
    for (const auto& [key, entry] : files) {
        const std::string name(key);
        const std::string shown = "file \"" + util::printable_excerpt(name) + "\"";
        const auto* object = entry.if_object();
        if (!object || object->size() != 1 || (!object->contains("text") && !object->contains("base64")))
            return bad_argument(shown + ": give exactly one of {\"text\": ...} or {\"base64\": ...}.");
        const auto& [kind, content] = *object->begin();
        if (!content.is_string()) return bad_argument(shown + ": \"" + std::string(kind) + "\" must be a string.");
        std::string bytes(content.as_string());
        if (kind == "base64") {
            auto decoded = util::base64_decode(bytes);
            if (!decoded) return bad_argument(shown + ": \"base64\" is not valid standard base64.");
            bytes = std::move(*decoded);
        }
        total += bytes.size();
        if (total > limits::k_mcp_max_input_bytes)
            return bad_argument("\"files\" hold more than " + std::to_string(limits::k_mcp_max_input_bytes) +
                                " bytes in all (at " + shown + ").");
        inputs.push_back({name, std::move(bytes)});
    }
    std::sort(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return inputs;
}

template <class Apply>
Expected<void> read_argument(const json::object& arguments, std::string_view key, Apply apply)
{
    const auto* value = arguments.if_contains(key);
    if (!value) return {};
    return apply(*value);
}

std::string percent_encoded(std::string_view name)
{
    static constexpr char k_hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : name) {
        const auto byte = static_cast<unsigned char>(c);
        if (std::isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            out += c;
        } else {
            out += '%';
            out += k_hex[byte >> 4];
            out += k_hex[byte & 0xF];
        }
    }
    return out;
}

// The blocks that return one output file: a line naming it, then its contents.
json::array file_blocks(const proto::FileContent& file)
{
    const bool png = file.bytes.starts_with(k_png_signature);
    const bool text = !png && util::is_valid_utf8(file.bytes);
    json::array blocks;
    blocks.push_back(json::object{{"type", "text"},
                                  {"text", "out/" + file.name + " (" + std::to_string(file.bytes.size()) + " bytes):"}});
    if (png) {
        blocks.push_back(json::object{{"type", "image"}, {"data", util::base64_encode(file.bytes)}, {"mimeType", "image/png"}});
        return blocks;
    }
    json::object resource{{"uri", "pybox://out/" + percent_encoded(file.name)},
                          {"mimeType", text ? "text/plain" : "application/octet-stream"}};
    if (text)
        resource["text"] = file.bytes;
    else
        resource["blob"] = util::base64_encode(file.bytes);
    blocks.push_back(json::object{{"type", "resource"}, {"resource", std::move(resource)}});
    return blocks;
}

std::size_t serialized_size(const json::value& value)
{
    return json::serialize(value).size();
}

std::size_t receipt_size(const proto::Receipt& receipt)
{
    return util::to_json_text(proto::receipt_to_json(receipt)).size();
}

// The largest prefix of at most `keep` bytes that does not split a UTF-8 sequence.
std::size_t utf8_boundary(std::string_view bytes, std::size_t keep)
{
    keep = std::min(keep, bytes.size());
    while (keep > 0 && keep < bytes.size() && (static_cast<unsigned char>(bytes[keep]) & 0xC0) == 0x80) --keep;
    return keep;
}

json::object text_block(std::string text)
{
    return json::object{{"type", "text"}, {"text", std::move(text)}};
}

}  // namespace

// The receipt of an unsealed run: the same layout, its sealed-only fields null (docs/receipt.md).
json::value unsealed_receipt_schema()
{
    auto schema = json::parse(k_receipt_schema);
    auto& properties = schema.at("properties").as_object();
    properties["identity"] = json::object{{"type", "object"},
                                          {"properties", json::object{{"run_id", json::object{{"type", "string"}}}}},
                                          {"required", json::array{"run_id"}}};
    properties["cleanup"] = json::object{{"type", "null"}};
    properties["sealed"] = json::object{{"const", false}};
    properties["isolation"] = json::object{{"const", "none"}};
    properties["unsealed"] = json::object{{"type", "object"}};
    schema.as_object()["description"] =
        "The UNSEALED run's receipt (sealed false, isolation none; docs/receipt.md and docs/unsealed.md).";
    auto& required = schema.at("required").as_array();
    required.push_back("sealed");
    required.push_back("isolation");
    required.push_back("unsealed");
    return schema;
}

json::array tool_definitions(bool allow_unsealed)
{
    json::object run_python{
        {"name", k_run_python},
        {"title", "Run Python in a sealed box"},
        {"description",
         "Runs a Python 3 program in a fresh, locked-down container (no network, read-only root, memory, CPU and "
         "process limits, a hard deadline), removes the container, and returns what it printed with a receipt. "
         "Input files are placed in the working folder; files the program writes to out/ come back (PNG images "
         "as images). isError is false whenever the program was run, whatever its exit: read "
         "receipt.observed.termination and the short view for how it ended."},
        {"inputSchema", json::parse(k_run_python_input_schema)},
        {"outputSchema", json::parse(k_receipt_schema)},
        {"annotations", json::object{{"readOnlyHint", true}, {"destructiveHint", false}, {"idempotentHint", false},
                                     {"openWorldHint", false}}},
    };
    json::object list_images{
        {"name", k_list_images},
        {"title", "List the images"},
        {"description", "Lists the images run_python can use (their names, IDs and recipe fingerprints)."},
        {"inputSchema", json::object{{"type", "object"}, {"properties", json::object{}}, {"additionalProperties", false}}},
        {"outputSchema", json::parse(k_image_list_schema)},
        {"annotations", json::object{{"readOnlyHint", true}, {"openWorldHint", false}}},
    };
    json::array tools{std::move(run_python), std::move(list_images)};
    if (!allow_unsealed) return tools;
    auto input = json::parse(k_run_python_input_schema);
    input.at("properties").as_object().erase("image");
    input.at("properties").as_object().erase("files");
    tools.push_back(json::object{
        {"name", k_run_python_unsealed},
        {"title", "Run Python UNSEALED on the host (no container)"},
        {"description",
         "UNSEALED: runs a Python 3 program with the host's python as the user running pybox mcp, WITHOUT a "
         "container: the program can read and write that user's files and use the network. Only process limits "
         "(memory, processes, CPU, file size, open files), a hard deadline and the output cap hold. For learning "
         "where no container engine exists; use run_python whenever it works. Offered only because pybox mcp was "
         "started with --allow-unsealed. The receipt says sealed: false."},
        {"inputSchema", std::move(input)},
        {"outputSchema", unsealed_receipt_schema()},
        {"annotations", json::object{{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", false},
                                     {"openWorldHint", true}}},
    });
    return tools;
}

Expected<proto::RunRequest> run_python_unsealed_request(const json::object& arguments)
{
    for (const char* key : {"image", "files"})
        if (arguments.contains(key))
            return bad_argument("Unknown argument \"" + std::string(key) +
                                "\" (an unsealed run has no image and moves no files).");
    auto request = run_python_request(arguments);
    if (request) request->files.reset();
    return request;
}

Expected<proto::RunRequest> run_python_request(const json::object& arguments)
{
    for (const auto& entry : arguments) {
        static constexpr std::string_view k_known[] = {"program", "timeout_s", "image", "files", "output_limit"};
        if (std::find(std::begin(k_known), std::end(k_known), std::string_view(entry.key())) == std::end(k_known))
            return bad_argument("Unknown argument \"" + util::printable_excerpt(std::string_view(entry.key())) + "\".");
    }
    proto::RunRequest request;
    request.output_limit_bytes = limits::k_mcp_default_output_limit_bytes;
    const auto* program = arguments.if_contains("program");
    if (!program || !program->is_string()) return bad_argument("\"program\" (a string) is required.");
    request.source = program->as_string();
    if (request.source.size() > limits::k_max_source_bytes)
        return bad_argument("\"program\" is larger than " + std::to_string(limits::k_max_source_bytes) + " bytes.");
    auto timeout = read_argument(arguments, "timeout_s", [&](const json::value& value) -> Expected<void> {
        if (!value.is_number()) return bad_argument("\"timeout_s\" must be a number (seconds, 0.1-30).");
        request.timeout_s = value.to_number<double>();
        if (!std::isfinite(request.timeout_s) || request.timeout_s < limits::k_min_timeout_s ||
            request.timeout_s > limits::k_max_timeout_s)
            return bad_argument("\"timeout_s\" must be between 0.1 and 30 seconds.");
        request.timeout_s = std::round(request.timeout_s * limits::k_timeout_steps_per_s) / limits::k_timeout_steps_per_s;
        return {};
    });
    if (!timeout) return timeout.error();
    auto image = read_argument(arguments, "image", [&](const json::value& value) -> Expected<void> {
        if (!value.is_string()) return bad_argument("\"image\" must be a string.");
        request.image = value.as_string();
        return {};
    });
    if (!image) return image.error();
    auto output_limit = read_argument(arguments, "output_limit", [&](const json::value& value) -> Expected<void> {
        const auto* limit = value.if_int64();
        if (!limit || *limit < static_cast<std::int64_t>(limits::k_min_output_limit_bytes) ||
            *limit > static_cast<std::int64_t>(limits::k_mcp_max_output_limit_bytes))
            return bad_argument("\"output_limit\" must be an integer from 1 to " +
                                std::to_string(limits::k_mcp_max_output_limit_bytes) + ".");
        request.output_limit_bytes = static_cast<std::size_t>(*limit);
        return {};
    });
    if (!output_limit) return output_limit.error();
    request.files = proto::RunRequest::Files{{}, true};
    auto files = read_argument(arguments, "files", [&](const json::value& value) -> Expected<void> {
        auto inputs = read_files(value);
        if (!inputs) return inputs.error();
        request.files->inputs = std::move(*inputs);
        return {};
    });
    if (!files) return files.error();
    if (auto valid = proto::validated_run_request(request); !valid) return bad_argument(valid.error().message);
    return request;
}

std::chrono::milliseconds supervisor_budget(double timeout_s)
{
    if (timeout_s <= limits::k_mcp_budget_ceiling_s) return limits::k_mcp_short_run_budget;
    const auto deadline = std::chrono::duration<double>(timeout_s);
    return std::chrono::duration_cast<std::chrono::milliseconds>(2 * deadline) +
           limits::k_daemon_run_worst_case_margin + limits::k_mcp_budget_extra;
}

proto::Receipt fit_receipt(proto::Receipt receipt)
{
    if (receipt_size(receipt) <= limits::k_mcp_max_receipt_bytes) return receipt;
    receipt.explanations.push_back(proto::explain(
        std::string(k_output_trimmed_code),
        "The output was trimmed so that the receipt fits in the " + std::to_string(limits::k_mcp_max_receipt_bytes) +
            " bytes an MCP result carries; the *_bytes counts are the program's.",
        json::object{{"receipt_cap_bytes", limits::k_mcp_max_receipt_bytes},
                     {"stdout_bytes_kept_by_daemon", receipt.capture.stdout_stream.bytes.size()},
                     {"stderr_bytes_kept_by_daemon", receipt.capture.stderr_stream.bytes.size()}}));
    receipt.capture.output_complete = false;
    // Both streams are cut to a common length: the longest that fits (a binary search).
    const auto kept = receipt.capture;
    const auto cut_to = [&](std::size_t length) {
        for (auto [stream, original] : {std::pair{&receipt.capture.stdout_stream, &kept.stdout_stream},
                                        std::pair{&receipt.capture.stderr_stream, &kept.stderr_stream}})
            stream->bytes = original->bytes.substr(0, utf8_boundary(original->bytes, length));
    };
    std::size_t fits = 0;
    std::size_t too_long = std::max(kept.stdout_stream.bytes.size(), kept.stderr_stream.bytes.size()) + 1;
    while (too_long - fits > 1) {
        const auto middle = fits + (too_long - fits) / 2;
        cut_to(middle);
        (receipt_size(receipt) <= limits::k_mcp_max_receipt_bytes ? fits : too_long) = middle;
    }
    cut_to(fits);
    return receipt;
}

json::object run_python_result(const proto::RunAnswer& answer)
{
    const auto receipt = fit_receipt(answer.receipt);
    auto receipt_json = proto::receipt_to_json(receipt);
    const auto receipt_text = util::to_json_text(receipt_json);
    const auto short_view = render_short_receipt(receipt) +
                            (answer.receipt_not_kept ? render_not_kept(*answer.receipt_not_kept) : std::string());
    if (receipt_text.size() > limits::k_mcp_max_receipt_bytes)
        return tool_error(short_view + "\nThe receipt does not fit in " +
                          std::to_string(limits::k_mcp_max_receipt_bytes) + " bytes even without the output.");

    json::array content{text_block(short_view + "\nReceipt (JSON):\n" + receipt_text)};
    // Room kept for the envelope and for the note naming the files left out.
    std::size_t reserve = 1024;
    for (const auto& file : answer.outputs) reserve += 8 * file.name.size() + 16;
    std::size_t used = serialized_size(receipt_json) + serialized_size(content) + reserve;
    std::size_t contents_left = limits::k_mcp_max_output_content_bytes;
    std::string left_out;
    for (const auto& file : answer.outputs) {
        auto blocks = file_blocks(file);
        const auto size = serialized_size(blocks);
        if (file.bytes.size() > contents_left || used + size > limits::k_mcp_max_response_bytes) {
            left_out += (left_out.empty() ? "" : ", ") + file.name;
            continue;
        }
        contents_left -= file.bytes.size();
        used += size;
        for (auto& block : blocks) content.push_back(std::move(block));
    }
    if (!left_out.empty())
        content.push_back(text_block("Contents not included (past the " +
                                     std::to_string(limits::k_mcp_max_output_content_bytes) +
                                     " bytes of file contents a result carries; the receipt lists every file with "
                                     "its size and SHA-256): " + left_out));
    return json::object{{"content", std::move(content)}, {"structuredContent", std::move(receipt_json)}, {"isError", false}};
}

json::object list_images_result(const proto::ImageList& images)
{
    return json::object{{"content", json::array{text_block(render_image_list(images).text)}},
                        {"structuredContent", proto::to_json(images)},
                        {"isError", false}};
}

json::object failed_call_result(const Error& error)
{
    return tool_error("Nothing ran (" + error.code + "): " + error.message);
}

std::optional<std::string> ProgressReporter::line_for(const proto::RunEvent& event)
{
    using Kind = proto::RunEvent::Kind;
    if (m_sent == limits::k_mcp_max_progress_notifications) return std::nullopt;
    std::string message;
    if (event.kind == Kind::started) {
        message = "started run " + event.run_id;
    } else if (event.kind == Kind::output) {
        m_output_bytes += event.bytes.size();
        std::string_view shown = event.bytes;
        if (shown.size() > limits::k_mcp_max_progress_message_bytes)
            shown = shown.substr(0, proto::utf8_complete_prefix(shown.substr(0, limits::k_mcp_max_progress_message_bytes)));
        message = (event.stream == proto::OutputStream::stdout_stream ? "stdout: " : "stderr: ") + util::utf8_lossy(shown);
    } else {
        return std::nullopt;
    }
    ++m_sent;
    return json::serialize(json::object{
        {"jsonrpc", "2.0"},
        {"method", "notifications/progress"},
        {"params", json::object{{"progressToken", m_token},
                                {"progress", m_output_bytes},
                                {"message", std::move(message)}}}});
}

}  // namespace pybox::client::mcp
