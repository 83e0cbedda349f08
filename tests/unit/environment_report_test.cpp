// The fed box's environment report (daemon/kube/environment_report.hpp): its strict parse, and
// its taking off the front of the box's stdout, whatever the chunks.
#include "daemon/kube/environment_report.hpp"
#include "proto/box_policy.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

using namespace pybox::kube;
using pybox::engine::EnvironmentReport;
using pybox::engine::OutputChunk;
using pybox::proto::OutputStream;

namespace {

using namespace std::string_literals;

const std::string k_marker(pybox::proto::k_fed_environment_marker);

std::vector<std::string> variables(const std::string& line)
{
    const auto report = parse_environment_report(line);
    INFO(report.unknown_reason);
    REQUIRE(report.variables.has_value());
    CHECK(report.unknown_reason.empty());
    return *report.variables;
}

std::string refusal(const std::string& line)
{
    const auto report = parse_environment_report(line);
    CHECK_FALSE(report.variables.has_value());
    CHECK_THAT(report.unknown_reason, Catch::StartsWith("the box's first process reported the program's environment in "
                                                        "a malformed line: "));
    return report.unknown_reason;
}

OutputChunk out(const std::string& bytes) { return {OutputStream::stdout_stream, bytes}; }
OutputChunk err(const std::string& bytes) { return {OutputStream::stderr_stream, bytes}; }

// The program's part of each chunk in turn, joined per stream.
struct Split {
    std::string out;
    std::string err;
    EnvironmentReport report;
};

Split split(const std::vector<OutputChunk>& chunks)
{
    EnvironmentReportSplitter splitter;
    Split result;
    for (const auto& chunk : chunks) {
        const auto part = splitter.program_part(chunk);
        if (!part) continue;
        CHECK_FALSE(part->bytes.empty());
        (part->stream == OutputStream::stdout_stream ? result.out : result.err) += part->bytes;
    }
    result.report = splitter.report();
    return result;
}

}  // namespace

TEST_CASE("An environment report gives its variables as NAME=value, names and values decoded from hex")
{
    CHECK(variables(k_marker + " 4b554245524e455445535f534552564943455f484f5354=31302e39362e302e31 50415448=2f62696e") ==
          std::vector<std::string>{"KUBERNETES_SERVICE_HOST=10.96.0.1", "PATH=/bin"});
}

TEST_CASE("An environment report of no variables is the marker alone")
{
    CHECK(variables(k_marker).empty());
}

TEST_CASE("An environment report keeps an empty value, and values with spaces, '=' and UTF-8")
{
    CHECK(variables(k_marker + " 41= 42=20613d62c3a9") == std::vector<std::string>{"A=", "B= a=b\xc3\xa9"});
}

TEST_CASE("An environment report that is not exactly the format is malformed")
{
    CHECK_THAT(refusal(""), Catch::Contains("does not start with \"pybox-environment\""));
    CHECK_THAT(refusal("pybox-environmenT 41=42"), Catch::Contains("does not start with"));
    CHECK_THAT(refusal(k_marker + "x"), Catch::Contains("not preceded by one space"));
    CHECK_THAT(refusal(k_marker + " "), Catch::Contains("has no '='"));
    CHECK_THAT(refusal(k_marker + "  41=42"), Catch::Contains("has no '='"));
    CHECK_THAT(refusal(k_marker + " 41=42 "), Catch::Contains("has no '='"));
    CHECK_THAT(refusal(k_marker + " 4142"), Catch::Contains("has no '='"));
    CHECK_THAT(refusal(k_marker + " 41=42=43"), Catch::Contains("hex digits in pairs"));
    CHECK_THAT(refusal(k_marker + " 4=42"), Catch::Contains("hex digits in pairs"));
    CHECK_THAT(refusal(k_marker + " 41=4"), Catch::Contains("hex digits in pairs"));
    CHECK_THAT(refusal(k_marker + " 4A=42"), Catch::Contains("hex digits in pairs"));
    CHECK_THAT(refusal(k_marker + " 4g=42"), Catch::Contains("hex digits in pairs"));
    CHECK_THAT(refusal(k_marker + " =42"), Catch::Contains("an empty name"));
    CHECK_THAT(refusal(k_marker + " 413d42=43"), Catch::Contains("'=' or NUL"));
    CHECK_THAT(refusal(k_marker + " 4100=43"), Catch::Contains("'=' or NUL"));
    CHECK_THAT(refusal(k_marker + " 41=4300"), Catch::Contains("'=' or NUL"));
    CHECK_THAT(refusal(k_marker + " ff=43"), Catch::Contains("not UTF-8"));
    CHECK_THAT(refusal(k_marker + " 41=c3"), Catch::Contains("not UTF-8"));
    CHECK_THAT(refusal(k_marker + " 42=43 41=43"), Catch::Contains("not in strictly ascending order"));
    CHECK_THAT(refusal(k_marker + " 41=43 41=44"), Catch::Contains("not in strictly ascending order"));
    CHECK_THAT(refusal(k_marker + " 41=42\r"), Catch::Contains("hex digits in pairs"));
}

TEST_CASE("An environment report as long as the bound is refused, one byte shorter is read")
{
    // The bound counts the newline.
    const std::string fits = k_marker + " 41=" + std::string(k_max_environment_report_bytes - 1 - k_marker.size() - 4, '3');
    REQUIRE(fits.size() + 1 == k_max_environment_report_bytes);
    CHECK(variables(fits).size() == 1);
    CHECK_THAT(refusal(fits + "33"), Catch::Contains("longer than " + std::to_string(k_max_environment_report_bytes)));
}

TEST_CASE("The splitter takes the report's line off the program's stdout and keeps the rest exactly")
{
    const auto result = split({out(k_marker + " 41=42\nhello\n" + k_marker + " 43=44\n")});
    CHECK(result.out == "hello\n" + k_marker + " 43=44\n");
    REQUIRE(result.report.variables);
    CHECK(*result.report.variables == std::vector<std::string>{"A=B"});
}

TEST_CASE("The splitter finds the report's end across stdout chunks of any size")
{
    const std::string stream = k_marker + " 41=42 43=\nprogram\x00 output\n"s + std::string(3, '\n');
    for (std::size_t size = 1; size <= stream.size(); ++size) {
        INFO("chunks of " << size << " bytes");
        std::vector<OutputChunk> chunks;
        for (std::size_t at = 0; at < stream.size(); at += size) chunks.push_back(out(stream.substr(at, size)));
        const auto result = split(chunks);
        CHECK(result.out == "program\x00 output\n\n\n\n"s);
        REQUIRE(result.report.variables);
        CHECK(*result.report.variables == std::vector<std::string>{"A=B", "C="});
    }
}

TEST_CASE("The splitter passes stderr as it comes, before and after the report")
{
    const auto result = split({err("early\n"), out(k_marker), err("mid"), out("\nout"), err("late")});
    CHECK(result.err == "early\nmidlate");
    CHECK(result.out == "out");
    CHECK(result.report.variables);
}

TEST_CASE("The splitter's report is unknown when the output ends before the report or inside it")
{
    const auto none = split({err("only stderr")});
    CHECK_FALSE(none.report.variables);
    CHECK(none.report.unknown_reason == "the box's output ended before its first process reported the program's environment");
    CHECK(none.err == "only stderr");

    const auto partial = split({out(k_marker + " 41=4")});
    CHECK_FALSE(partial.report.variables);
    CHECK(partial.report.unknown_reason == "the box's output ended inside its first process's report of the program's "
                                           "environment, after 22 bytes of it");
    CHECK(partial.out.empty());
}

TEST_CASE("The splitter drops an oversize report's bytes to its newline, keeps the program's output, and says why")
{
    const std::string line = k_marker + " 41=" + std::string(3 * k_max_environment_report_bytes, 'a');
    const auto result = split({out(line.substr(0, 100)), out(line.substr(100)), out("\nafter\n")});
    CHECK(result.out == "after\n");
    CHECK_FALSE(result.report.variables);
    CHECK(result.report.unknown_reason == "the box's first process reported the program's environment in " +
                                              std::to_string(line.size() + 1) + " bytes, more than the " +
                                              std::to_string(k_max_environment_report_bytes) + " read");
}

TEST_CASE("The splitter's malformed report is unknown with the parser's reason, and the output after it is kept")
{
    const auto result = split({out("not a report\nprogram\n")});
    CHECK(result.out == "program\n");
    CHECK_FALSE(result.report.variables);
    CHECK_THAT(result.report.unknown_reason, Catch::Contains("malformed line"));
}
