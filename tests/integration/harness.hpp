// Helpers for the integration tests: they drive the real `pybox` client against the real
// daemon and engine started by the ctest fixture (env_up.sh), in the suite's own PYBOX_HOME.
#pragma once

#include "common/process.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pybox::test {

// The suite's runtime folder ($PYBOX_HOME, set by ctest).
std::filesystem::path runtime_home();

// Runs `pybox args...` with `input` on stdin, stdout and stderr kept apart. The try_ form
// asserts nothing, so it may be called from several threads at once.
Expected<ProcessResult> try_run_pybox(const std::vector<std::string>& args, const std::string& input = "",
                                      const std::vector<std::pair<std::string, std::string>>& env = {});
ProcessResult run_pybox(const std::vector<std::string>& args, const std::string& input = "",
                        const std::vector<std::pair<std::string, std::string>>& env = {});

// `pybox exec - --json extra...`: the parsed receipt (fails the test if it is not JSON).
struct JsonRun {
    ProcessResult process;
    boost::json::value receipt;
};
JsonRun run_json(const std::string& program, const std::vector<std::string>& extra = {});

// IDs of every box (any state) on the suite's engine that carries this installation's label.
std::vector<std::string> labelled_boxes();

// The end of every hostile case: no box with this installation's label is left, a trivial run
// right after completes normally (exit 0, its output, the box removed), and the daemon's open
// fds come back to the idle count seen at the first call (waiting up to 3 s for connections
// to close).
void check_ended_clean();

// The suite's daemon: its pid ($PYBOX_HOME/pyboxd.pid), resident memory in KiB
// (/proc/<pid>/status VmRSS) and open file descriptors (/proc/<pid>/fd).
int daemon_pid();
std::size_t daemon_rss_kib();
std::size_t daemon_fd_count();
// A process's VmRSS in KiB, or nullopt; asserts nothing, so it may be called from any thread.
std::optional<std::size_t> try_rss_kib(int pid);

}  // namespace pybox::test
