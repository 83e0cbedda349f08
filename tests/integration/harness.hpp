// Helpers for the integration tests: they drive the real `pybox` client against the real
// daemon and engine started by the ctest fixture (env_up.sh), in the suite's own PYBOX_HOME.
#pragma once

#include "common/process.hpp"

#include <boost/json/value.hpp>

#include <filesystem>
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

}  // namespace pybox::test
