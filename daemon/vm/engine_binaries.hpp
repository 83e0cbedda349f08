// The programs the private engine runs as root, checked before dockerd is spawned.
//
// dockerd is config.json's "dockerd" (an absolute path, never searched). dockerd starts
// containerd, containerd starts containerd-shim-runc-v2 for each box, and the shim runs runc
// (dockerd's built-in runtime; another "runtime" would have to be registered with dockerd, which
// PyBox's empty --config-file never does): those three are found through $PATH, and PyBox gives
// dockerd k_engine_path as its PATH, never the daemon's own (which under sudo or a login shell
// may name a user's folders). check_engine_binaries() finds each helper as that search does
// (the first folder of k_engine_path holding it) and checks dockerd and the three under
// common/trusted_binary's root_only_rule: the file and every folder on its way, links followed,
// owned by root and writable by no one else.
//
// Pure: facts come through a FactsLookup. Failures: "tool_untrusted" naming the path and why;
// "engine_start_failed" when a helper is in no folder of k_engine_path.
#pragma once

#include "common/error.hpp"
#include "common/trusted_binary.hpp"

#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::vm {

// dockerd's PATH, in search order (Debian's docker.io, containerd and runc install into /usr).
inline constexpr std::array<std::string_view, 4> k_engine_path = {"/usr/sbin", "/usr/bin", "/sbin", "/bin"};
// What dockerd and containerd run as root, found through k_engine_path.
inline constexpr std::array<std::string_view, 3> k_engine_helpers = {"containerd", "containerd-shim-runc-v2", "runc"};

// k_engine_path as a PATH value: "/usr/sbin:/usr/bin:/sbin:/bin".
std::string engine_path_variable();

// dockerd, then each of k_engine_helpers as found in k_engine_path, each checked as above; the
// checked paths in that order, or the first failure.
Expected<std::vector<std::filesystem::path>> check_engine_binaries(const std::filesystem::path& dockerd,
                                                                   const FactsLookup& lookup);

}  // namespace pybox::vm
