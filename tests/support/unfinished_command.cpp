#include "tests/support/unfinished_command.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

namespace pybox::test {

namespace {

// The end of `text`: at most k_unfinished_tail_bytes, from the first line start inside them.
std::string tail_of(const std::string& text)
{
    if (text.size() <= k_unfinished_tail_bytes) return text;
    std::string tail = text.substr(text.size() - k_unfinished_tail_bytes);
    const auto line_start = tail.find('\n');
    if (line_start != std::string::npos && line_start + 1 < tail.size()) tail.erase(0, line_start + 1);
    return "[...]\n" + tail;
}

std::string stream_part(const char* name, const std::string& text)
{
    if (text.empty()) return std::string("\n--- ") + name + ": nothing";
    return std::string("\n--- ") + name + ":\n" + tail_of(text);
}

}  // namespace

std::string unfinished_command_report(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                      const ProcessResult& result)
{
    std::string command;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (i > 0) command += ' ';
        command += i == 0 ? std::filesystem::path(argv[i]).filename().string() : argv[i];
    }
    std::string report = "`" + command + "` did not finish within " +
                         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit).count()) +
                         " s (killed); it was waiting after printing:";
    report += stream_part("stdout", result.output);
    report += stream_part("stderr", result.error_output);
    return report;
}

ProcessResult finished_within(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                              const Expected<ProcessResult>& result)
{
    if (!result) FAIL("`" << (argv.empty() ? "" : argv.front()) << "` could not be started: " << result.error().message);
    if (result->timed_out) FAIL(unfinished_command_report(argv, limit, *result));
    return *result;
}

ProcessResult run_to_end(const std::vector<std::string>& argv, const ProcessOptions& options)
{
    return finished_within(argv, options.timeout, run_process(argv, options));
}

}  // namespace pybox::test
