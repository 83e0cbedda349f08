// The report a test gives of a command that did not finish in time (tests/support/unfinished_command.hpp).
#include "tests/support/unfinished_command.hpp"

#include <catch2/catch.hpp>

using pybox::ProcessResult;
using pybox::test::k_unfinished_tail_bytes;
using pybox::test::unfinished_command_report;

TEST_CASE("A command that did not finish is reported with its limit and what it printed last")
{
    ProcessResult result;
    result.timed_out = true;
    result.output = "vm start: copying stdlib to engine2\n";
    result.error_output = "";
    const auto report = unfinished_command_report({"/build/bin/pybox", "vm", "start"}, std::chrono::minutes(10), result);
    CHECK_THAT(report, Catch::StartsWith("`pybox vm start` did not finish within 600 s (killed)"));
    CHECK_THAT(report, Catch::Contains("--- stdout:\nvm start: copying stdlib to engine2\n"));
    CHECK_THAT(report, Catch::EndsWith("--- stderr: nothing"));
}

TEST_CASE("Only the end of a long output is kept, from a line start")
{
    ProcessResult result;
    for (int line = 0; line < 1000; ++line) result.error_output += "progress line " + std::to_string(line) + "\n";
    const auto report = unfinished_command_report({"pybox", "image", "build", "six"}, std::chrono::seconds(90), result);
    CHECK_THAT(report, Catch::Contains("within 90 s"));
    CHECK_THAT(report, Catch::Contains("--- stderr:\n[...]\nprogress line "));
    CHECK_THAT(report, Catch::EndsWith("progress line 999\n"));
    CHECK_FALSE(report.find("progress line 0\n") != std::string::npos);
    const auto stderr_part = report.substr(report.find("--- stderr:\n"));
    CHECK(stderr_part.size() <= std::string("--- stderr:\n[...]\n").size() + k_unfinished_tail_bytes);
}
