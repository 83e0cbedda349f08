// What a test says when a command it ran did not finish within its time limit: the command,
// the limit, and the end of what it printed on each stream, instead of a bare exit code of -1.
#pragma once

#include "common/process.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace pybox::test {

// The last bytes of each stream kept in the report.
inline constexpr std::size_t k_unfinished_tail_bytes = 2000;

// "`pybox vm start` did not finish within 600 s (killed); it was waiting after printing:\n..."
// with at most k_unfinished_tail_bytes of stdout and of stderr, each from a line start where one
// is in reach.
std::string unfinished_command_report(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                      const ProcessResult& result);

// The result of `argv` run for at most `limit`: fails the test (on the test's thread) when the
// command could not be started, with the reason, or did not finish in time, with
// unfinished_command_report(), instead of leaving a test to compare exit code -1.
ProcessResult finished_within(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                              const Expected<ProcessResult>& result);
// Runs `argv` with `options` (run_process) and returns finished_within() of it.
ProcessResult run_to_end(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace pybox::test
