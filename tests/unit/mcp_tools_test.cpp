#include "client/mcp/mcp_tools.hpp"

#include "common/limits.hpp"
#include "tests/support/sample_receipt.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace json = boost::json;
using namespace pybox::client::mcp;
namespace limits = pybox::limits;

namespace {

const json::object& tool(const json::array& tools, std::string_view name)
{
    for (const auto& entry : tools)
        if (entry.at("name").as_string() == name) return entry.as_object();
    FAIL("no tool " << name);
    throw;
}

std::string error_text(const pybox::Expected<pybox::proto::RunRequest>& request)
{
    REQUIRE(!request.has_value());
    return request.error().message;
}

// The keys the tool's outputSchema requires are all in `document`, recursively for nested objects.
void check_required(const json::object& schema, const json::value& document)
{
    if (const auto* required = schema.if_contains("required"))
        for (const auto& key : required->as_array()) {
            INFO("key " << key);
            REQUIRE(document.as_object().contains(key.as_string()));
            const auto& nested = schema.at("properties").at(key.as_string()).as_object();
            if (nested.contains("required") && document.at(key.as_string()).is_object())
                check_required(nested, document.at(key.as_string()));
        }
}

pybox::proto::RunAnswer answer_with(std::string stdout_bytes, std::vector<pybox::proto::FileContent> outputs = {})
{
    pybox::proto::RunAnswer answer{pybox::test::sample_receipt(), std::move(outputs), std::nullopt};
    answer.receipt.capture.stdout_stream = {stdout_bytes, stdout_bytes.size()};
    return answer;
}

}  // namespace

TEST_CASE("MCP tools: two tools, each with an object inputSchema and outputSchema")
{
    const auto tools = tool_definitions();
    REQUIRE(tools.size() == 2);
    for (const auto& entry : tools) {
        CHECK(entry.at("inputSchema").at("type") == "object");
        CHECK(entry.at("outputSchema").at("type") == "object");
        CHECK(!entry.at("description").as_string().empty());
    }
    const auto& input = tool(tools, k_run_python).at("inputSchema");
    CHECK(input.at("required") == json::array{"program"});
    CHECK(input.at("properties").at("output_limit").at("maximum") == limits::k_mcp_max_output_limit_bytes);
    CHECK(input.at("properties").at("output_limit").at("default") == limits::k_mcp_default_output_limit_bytes);
    CHECK(input.at("properties").at("files").at("maxProperties") == limits::k_mcp_max_input_files);
    CHECK(input.at("properties").at("timeout_s").at("maximum").to_number<double>() == limits::k_max_timeout_s);
}

TEST_CASE("run_python arguments: defaults, every run moves files, inputs decoded and sorted")
{
    auto request = run_python_request(json::parse(R"x({"program":"print(6*7)"})x").as_object());
    REQUIRE(request.has_value());
    CHECK(request->source == "print(6*7)");
    CHECK(request->timeout_s == limits::k_default_timeout_s);
    CHECK(request->image == "stdlib");
    CHECK(request->output_limit_bytes == limits::k_mcp_default_output_limit_bytes);
    REQUIRE(request->files.has_value());
    CHECK(request->files->outputs);
    CHECK(request->files->inputs.empty());

    request = run_python_request(json::parse(
        R"({"program":"x","timeout_s":0.25,"image":"data","output_limit":8192,
            "files":{"b/c.txt":{"text":"hé"},"a.bin":{"base64":"AAE="}}})").as_object());
    REQUIRE(request.has_value());
    CHECK(request->timeout_s == 0.25);
    CHECK(request->image == "data");
    CHECK(request->output_limit_bytes == 8192);
    REQUIRE(request->files->inputs.size() == 2);
    CHECK(request->files->inputs[0] == pybox::proto::FileContent{"a.bin", std::string("\0\1", 2)});
    CHECK(request->files->inputs[1] == pybox::proto::FileContent{"b/c.txt", "hé"});
}

TEST_CASE("run_python arguments: each bad one is refused with a sentence naming it")
{
    const auto refused = [](std::string_view text) { return error_text(run_python_request(json::parse(text).as_object())); };
    CHECK(refused(R"({})").find("\"program\"") != std::string::npos);
    CHECK(refused(R"({"program":1})").find("\"program\"") != std::string::npos);
    CHECK(refused(R"({"program":"x","shell":true})").find("\"shell\"") != std::string::npos);
    CHECK(refused(R"({"program":"x","timeout_s":31})").find("timeout_s") != std::string::npos);
    CHECK(refused(R"({"program":"x","timeout_s":"2"})").find("timeout_s") != std::string::npos);
    CHECK(refused(R"({"program":"x","output_limit":8193})").find("output_limit") != std::string::npos);
    CHECK(refused(R"({"program":"x","output_limit":0})").find("output_limit") != std::string::npos);
    CHECK(refused(R"({"program":"x","output_limit":1.5})").find("output_limit") != std::string::npos);
    CHECK(refused(R"({"program":"x","image":"nope!"})").find("image") != std::string::npos);
    CHECK(refused(R"({"program":"x","files":[]})").find("\"files\"") != std::string::npos);
    CHECK(refused(R"({"program":"x","files":{"a":{"text":"1","base64":"AA=="}}})").find("exactly one") != std::string::npos);
    CHECK(refused(R"({"program":"x","files":{"a":{"base64":"!!"}}})").find("base64") != std::string::npos);
    CHECK(refused(R"({"program":"x","files":{"../a":{"text":""}}})").find("../a") != std::string::npos);
    CHECK(refused(R"({"program":"x","files":{"out/a":{"text":""}}})").find("output folder") != std::string::npos);

    json::object too_many{{"program", "x"}, {"files", json::object{}}};
    for (std::size_t i = 0; i <= limits::k_mcp_max_input_files; ++i)
        too_many["files"].as_object()["f" + std::to_string(i)] = json::object{{"text", ""}};
    CHECK(error_text(run_python_request(too_many)).find("at most 16") != std::string::npos);
    json::object too_big{{"program", "x"},
                         {"files", json::object{{"a", json::object{{"text", std::string(limits::k_mcp_max_input_bytes, 'a')}}},
                                                {"b", json::object{{"text", "b"}}}}}};
    CHECK(error_text(run_python_request(too_big)).find("262144") != std::string::npos);
    json::object big_program{{"program", std::string(limits::k_max_source_bytes + 1, '#')}};
    CHECK(error_text(run_python_request(big_program)).find("65536") != std::string::npos);
}

TEST_CASE("The supervisor's budget: 45 s up to a 2 s deadline, then the daemon's worst case + 5 s")
{
    using std::chrono::milliseconds;
    CHECK(supervisor_budget(0.1) == milliseconds(45'000));
    CHECK(supervisor_budget(2.0) == milliseconds(45'000));
    CHECK(supervisor_budget(10.0) == milliseconds(20'000 + 45'500 + 5'000));
    CHECK(supervisor_budget(30.0) == milliseconds(60'000 + 45'500 + 5'000));
}

TEST_CASE("A run's result: the receipt as structuredContent, the short view and the JSON as text")
{
    const auto result = run_python_result(answer_with("42\n"));
    CHECK(result.at("isError") == false);
    const auto& structured = result.at("structuredContent");
    CHECK(structured.at("capture").at("stdout") == "42\n");
    check_required(tool(tool_definitions(), k_run_python).at("outputSchema").as_object(), structured);
    const auto& content = result.at("content").as_array();
    REQUIRE(content.size() == 1);
    const std::string text(content[0].at("text").as_string());
    CHECK(text.find("Receipt (JSON):\n") != std::string::npos);
    CHECK(json::parse(text.substr(text.find("Receipt (JSON):\n") + 16)) == structured);
    CHECK(text.find("NOT KEPT") == std::string::npos);
}

TEST_CASE("A run's result whose receipt pyboxd did not keep says so in its text, before the JSON")
{
    auto answer = answer_with("42\n");
    answer.receipt_not_kept = "pyboxd signed the receipt of run 1 but could not keep it: full.";
    const auto result = run_python_result(answer);
    const std::string text(result.at("content").as_array()[0].at("text").as_string());
    const auto said = text.find("NOT KEPT — pyboxd signed the receipt of run 1 but could not keep it: full.");
    REQUIRE(said != std::string::npos);
    CHECK(said < text.find("Receipt (JSON):\n"));
}

TEST_CASE("A receipt over 64 KiB is trimmed to fit, stays valid and says so")
{
    // Every quote byte doubles in JSON; control bytes become \u00XX.
    for (const auto& bytes : {std::string(8192, '"'), std::string(8192, '\x01'), std::string(8192, '\xff')}) {
        auto answer = answer_with(bytes);
        answer.receipt.capture.stderr_stream = {std::string(8192, '\x02'), 100'000};
        answer.receipt.capture.stdout_stream.bytes += std::string(50'000, '\x01');
        answer.receipt.capture.stdout_stream.total_bytes = 1'000'000;
        const auto fitted = fit_receipt(answer.receipt);
        const auto text = pybox::util::to_json_text(pybox::proto::receipt_to_json(fitted));
        CHECK(text.size() <= limits::k_mcp_max_receipt_bytes);
        CHECK(text.size() > limits::k_mcp_max_receipt_bytes / 2);
        const auto read_back = pybox::proto::receipt_from_json(json::parse(text));
        REQUIRE(read_back.has_value());
        CHECK(read_back->capture.stdout_stream.truncated());
        CHECK(read_back->explanations.back().code == k_output_trimmed_code);
        CHECK(!read_back->capture.output_complete);
    }
    CHECK(fit_receipt(answer_with("small").receipt) == answer_with("small").receipt);
}

TEST_CASE("Output files come back: PNG as an image, text as a resource, within the contents cap")
{
    const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + "rest";
    const auto result = run_python_result(answer_with("", {{"a.txt", "hello"},
                                                           {"b.bin", std::string("\xff\x00", 2)},
                                                           {"big.txt", std::string(limits::k_mcp_max_output_content_bytes, 'x')},
                                                           {"plot.png", png}}));
    const auto& content = result.at("content").as_array();
    REQUIRE(content.size() == 1 + 2 * 3 + 1);
    CHECK(content[1].at("text") == "out/a.txt (5 bytes):");
    CHECK(content[2].at("resource").at("text") == "hello");
    CHECK(content[2].at("resource").at("uri") == "pybox://out/a.txt");
    CHECK(content[4].at("resource").at("blob") == "/wA=");
    CHECK(content[6].at("type") == "image");
    CHECK(content[6].at("mimeType") == "image/png");
    CHECK(content[6].at("data").as_string() == pybox::util::base64_encode(png));
    CHECK(content[7].at("text").as_string().ends_with(": big.txt"));
    CHECK(json::serialize(result).size() <= limits::k_mcp_max_response_bytes);
}

TEST_CASE("A worst-case result stays within the response cap")
{
    std::vector<pybox::proto::FileContent> outputs;
    for (int i = 0; i < 12; ++i) outputs.push_back({"f" + std::to_string(i), std::string(4096, '"')});
    auto answer = answer_with(std::string(8192, '"'));
    answer.receipt.capture.stderr_stream = {std::string(8192, '"'), 8192};
    const auto result = run_python_result(answer);
    CHECK(json::serialize(result).size() <= limits::k_mcp_max_response_bytes);
    const auto with_files = run_python_result({answer.receipt, outputs, std::nullopt});
    CHECK(json::serialize(with_files).size() <= limits::k_mcp_max_response_bytes);
    CHECK(with_files.at("content").as_array().size() > 1);
}

TEST_CASE("Errors before any run are tool errors without structuredContent")
{
    const auto result = failed_call_result(pybox::make_error("daemon_not_running", "pyboxd is not running."));
    CHECK(result.at("isError") == true);
    CHECK(!result.contains("structuredContent"));
    CHECK(result.at("content").at(0).at("text") == "Nothing ran (daemon_not_running): pyboxd is not running.");
}

TEST_CASE("list_images: the daemon's list as structuredContent and the table as text")
{
    pybox::proto::ImageList images;
    images.images.push_back({"stdlib", "sha256:" + std::string(64, 'a'), std::string(64, 'b'), "2026-11-29T20:00:05Z",
                             std::string(64, 'c'), true, std::nullopt});
    const auto result = list_images_result(images);
    CHECK(result.at("structuredContent").at("images").at(0).at("name") == "stdlib");
    check_required(tool(tool_definitions(), k_list_images).at("outputSchema").as_object(), result.at("structuredContent"));
    CHECK(result.at("content").at(0).at("text").as_string().starts_with("NAME"));
}

TEST_CASE("run_python_unsealed is offered only when asked for, and its receipt schema allows the nulls")
{
    for (const auto& entry : tool_definitions()) CHECK(entry.at("name").as_string() != k_run_python_unsealed);
    const auto tools = tool_definitions(true);
    REQUIRE(tools.size() == 3);
    const auto& unsealed = tool(tools, k_run_python_unsealed);
    CHECK(unsealed.at("description").as_string().find("WITHOUT a container") != json::string::npos);
    CHECK_FALSE(unsealed.at("inputSchema").at("properties").as_object().contains("image"));
    CHECK_FALSE(unsealed.at("inputSchema").at("properties").as_object().contains("files"));
    const auto& schema = unsealed.at("outputSchema").as_object();
    CHECK(schema.at("properties").at("sealed").at("const") == false);
    CHECK(schema.at("properties").at("cleanup").at("type") == "null");
}

TEST_CASE("run_python_unsealed arguments: no image and no files; the rest as run_python's")
{
    const auto request = run_python_unsealed_request(json::parse(R"j({"program": "print(1)", "timeout_s": 3})j").as_object());
    REQUIRE(request.has_value());
    CHECK(request->timeout_s == 3.0);
    CHECK_FALSE(request->files.has_value());
    CHECK(request->output_limit_bytes == limits::k_mcp_default_output_limit_bytes);
    for (const char* text : {R"j({"program": "print(1)", "image": "data"})j", R"j({"program": "print(1)", "files": {}})j"})
        CHECK_FALSE(run_python_unsealed_request(json::parse(text).as_object()).has_value());
}

TEST_CASE("MCP live output: a progress line per event, the output bytes counted, the text cut on a character")
{
    ProgressReporter reporter(json::value("tok"));
    pybox::proto::RunEvent started;
    started.kind = pybox::proto::RunEvent::Kind::started;
    started.run_id = "abc";
    const auto first = reporter.line_for(started);
    REQUIRE(first);
    CHECK(json::parse(*first) == json::parse(R"({"jsonrpc":"2.0","method":"notifications/progress",
        "params":{"progressToken":"tok","progress":0,"message":"started run abc"}})"));

    pybox::proto::RunEvent out;
    out.kind = pybox::proto::RunEvent::Kind::output;
    out.bytes = "hi\xff\n";
    const auto second = reporter.line_for(out);
    REQUIRE(second);
    const auto params = json::parse(*second).at("params");
    CHECK(params.at("progress") == 4);
    CHECK(params.at("message") == "stdout: hi\xef\xbf\xbd\n");  // the invalid byte as U+FFFD

    pybox::proto::RunEvent long_err;
    long_err.kind = pybox::proto::RunEvent::Kind::output;
    long_err.stream = pybox::proto::OutputStream::stderr_stream;
    long_err.bytes = std::string(limits::k_mcp_max_progress_message_bytes - 1, 'e') + "\xc3\xa9" + "tail";
    const auto third = reporter.line_for(long_err);
    REQUIRE(third);
    const auto long_params = json::parse(*third).at("params");
    CHECK(long_params.at("progress") == 4 + long_err.bytes.size());
    CHECK(long_params.at("message").as_string() == "stderr: " + std::string(limits::k_mcp_max_progress_message_bytes - 1, 'e'));
}

TEST_CASE("MCP live output: after the cap of progress lines per call nothing more is told")
{
    ProgressReporter reporter(json::value(1));
    pybox::proto::RunEvent out;
    out.kind = pybox::proto::RunEvent::Kind::output;
    out.bytes = "x";
    for (std::size_t i = 0; i < limits::k_mcp_max_progress_notifications; ++i) REQUIRE(reporter.line_for(out));
    CHECK_FALSE(reporter.line_for(out));
}
