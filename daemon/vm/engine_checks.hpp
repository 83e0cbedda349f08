// The checks an engine must pass before PyBox runs boxes on it, as pure functions over what the
// engine reported (GET /_ping, GET /info) and over the engine process's command line. No I/O:
// PrivateEngine gathers the inputs; these decide. Each failed check is a CheckProblem with a
// stable check name and one sentence saying why.
#pragma once

#include "daemon/engine/engine_facts.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::vm {

// The oldest Engine API PyBox works with.
inline constexpr std::string_view k_min_api_version = "1.40";

struct CheckProblem {
    std::string check;    // "ping", "info.os_type", "info.data_root", "info.seccomp", "info.cgroup",
                          // "info.runtime", "listeners", "images"
    std::string message;  // why, in one sentence
};

struct EngineExpectations {
    bool private_engine = true;
    // The private engine's data-root as dockerd reports it (symlinks resolved); unused otherwise.
    std::filesystem::path data_root;
    // The OCI runtime the boxes use.
    std::string runtime;
};

// "1.41" -> (1, 41); nullopt when it is not two dot-separated decimal numbers.
std::optional<std::pair<int, int>> parse_api_version(std::string_view version);

// The engine's advertised API version must be at least k_min_api_version.
std::optional<CheckProblem> check_api_version(std::string_view advertised);

// OSType linux, DockerRootDir (private engine only), seccomp among SecurityOptions, a known
// cgroup driver and version, the runtime among Runtimes.
std::vector<CheckProblem> check_info(const engine::EngineInfo& info, const EngineExpectations& expected);

// The private engine's command line must listen on our unix socket only and read our
// (empty) config file, so no TCP host can come from /etc/docker/daemon.json.
std::optional<CheckProblem> check_listeners(const std::vector<std::string>& argv,
                                            const std::filesystem::path& socket,
                                            const std::filesystem::path& config_file);

}  // namespace pybox::vm
