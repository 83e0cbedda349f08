#include "proto/run_events.hpp"

#include "common/api_error_codes.hpp"
#include "proto/receipt_encoding.hpp"
#include "util/json_reader.hpp"
#include "util/json_writer.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <boost/json/object.hpp>

#include <algorithm>

namespace pybox::proto {

namespace {

namespace json = boost::json;

// The answer inside a receipt event is read as deep as the client reads an unstreamed one.
constexpr std::size_t k_max_event_depth = 33;

std::string_view stream_name(OutputStream stream)
{
    return stream == OutputStream::stdout_stream ? "stdout" : "stderr";
}

std::string line_of(const json::value& value) { return util::to_json_text(value) + "\n"; }

// How many bytes a UTF-8 sequence that begins with `lead` has; 0 when it cannot begin one.
std::size_t sequence_length(unsigned char lead)
{
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) return 3;
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    return 0;
}

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The longest piece of at most k_max_event_data_bytes, shortened to end between characters
// when the cut would fall inside one.
std::size_t piece_length(std::string_view bytes)
{
    if (bytes.size() <= k_max_event_data_bytes) return bytes.size();
    std::size_t length = k_max_event_data_bytes;
    for (std::size_t back = 0; back < 3 && length > 0 && is_continuation(static_cast<unsigned char>(bytes[length]));
         ++back)
        --length;
    return length == 0 ? k_max_event_data_bytes : length;
}

Error invalid_event(std::string_view problem)
{
    return make_error(api_error::k_invalid_answer, "The daemon's streamed run event cannot be read: " + std::string(problem) + ".");
}

}  // namespace

std::string started_event(std::string_view run_id)
{
    return line_of(json::object{{"event", "started"}, {"run_id", run_id}});
}

void append_output_events(std::string& lines, OutputStream stream, std::string_view bytes)
{
    while (!bytes.empty()) {
        const std::string_view piece = bytes.substr(0, piece_length(bytes));
        bytes.remove_prefix(piece.size());
        const bool text = util::is_valid_utf8(piece);
        lines += line_of(json::object{{"event", stream_name(stream)},
                                      {"encoding", text ? detail::k_encoding_utf8 : detail::k_encoding_base64},
                                      {"data", text ? std::string(piece) : util::base64_encode(piece)}});
    }
}

std::string receipt_event(std::string_view answer_json, const std::optional<std::string>& receipt_not_kept)
{
    std::string line = R"({"event":"receipt","answer":)";
    line += answer_json;
    if (receipt_not_kept) line += R"(,"receipt_not_kept":)" + util::to_json_text(json::value(*receipt_not_kept));
    line += "}\n";
    return line;
}

std::string error_event(const ErrorAnswer& error)
{
    return line_of(json::object{{"event", "error"}, {"error", to_json(error).at("error")}});
}

std::size_t utf8_complete_prefix(std::string_view bytes)
{
    const std::size_t size = bytes.size();
    for (std::size_t back = 1; back <= std::min<std::size_t>(3, size); ++back) {
        const auto byte = static_cast<unsigned char>(bytes[size - back]);
        if (is_continuation(byte)) continue;
        const std::size_t needed = sequence_length(byte);
        return needed > back ? size - back : size;
    }
    return size;
}

Expected<RunEvent> parse_run_event(std::string_view line, util::ReadMode mode)
{
    auto document = util::parse_json_strictly(line, k_max_event_depth);
    if (!document.ok())
        return invalid_event(document.duplicate_key ? "it repeats the key \"" + util::printable_excerpt(*document.duplicate_key) + "\""
                                                    : document.problem);
    if (!document.value.is_object()) return invalid_event("it is not a JSON object");
    std::string error;
    util::ObjectReader reader(document.value, "", error, mode);
    RunEvent event;
    const std::string kind = reader.string("event");
    if (kind == "started") {
        event.kind = RunEvent::Kind::started;
        event.run_id = reader.string("run_id");
    } else if (kind == "stdout" || kind == "stderr") {
        event.kind = RunEvent::Kind::output;
        event.stream = kind == "stdout" ? OutputStream::stdout_stream : OutputStream::stderr_stream;
        const std::string encoding = reader.string("encoding");
        std::string data = reader.string("data");
        if (encoding == detail::k_encoding_utf8) {
            event.bytes = std::move(data);
        } else if (encoding == detail::k_encoding_base64) {
            auto decoded = util::base64_decode(data);
            if (!decoded) reader.fail("data", "is not strict base64");
            event.bytes = decoded.value_or(std::string());
        } else if (error.empty()) {
            reader.fail("encoding", "is neither \"utf-8\" nor \"base64\"");
        }
        if (event.bytes.size() > k_max_event_data_bytes)
            reader.fail("data", "carries more than " + std::to_string(k_max_event_data_bytes) + " bytes");
    } else if (kind == "receipt") {
        event.kind = RunEvent::Kind::receipt;
        event.answer = reader.any("answer");
        if (const json::value* why = reader.if_present("receipt_not_kept"); why != nullptr && why->is_string())
            event.receipt_not_kept = std::string(why->get_string());
        else if (why != nullptr)
            reader.fail("receipt_not_kept", "is not a string");
    } else if (kind == "error") {
        event.kind = RunEvent::Kind::error;
        auto inner = reader.object("error");
        event.error = ErrorAnswer{inner.string("code"), inner.string("message"), inner.boolean("retryable")};
        inner.finish();
    } else if (error.empty() && mode == util::ReadMode::tolerant) {
        return event;  // Kind::unknown: a newer daemon's event, skipped by a tolerant client
    } else if (error.empty()) {
        reader.fail("event", "names no event of this version");
    }
    reader.finish();
    if (!error.empty()) return invalid_event(util::printable_excerpt(error, 200));
    return event;
}

}  // namespace pybox::proto
