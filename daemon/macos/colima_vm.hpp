// ColimaVm: `pybox vm start | stop` on macOS, the thin glue that runs colima with the command
// lines, files and checks of colima_profile.hpp, colima_checks.hpp and colima_ssh_config.hpp.
// It is compiled and unit-tested on Linux too (tests/unit/colima_vm_test.cpp runs it against a
// scripted stand-in for colima); only macOS calls it for real.
//
// start(): writes override.yaml and the anonymous Docker config (0600, under folders made 0700
// first: colima falls back to ~/.colima without its home), checks colima's version, runs
// `colima start`, then gathers the facts (status, the VM's mounts through `colima ssh`, Lima's
// host agent log of this start, override.yaml read back) and checks them. Any problem: `colima
// stop`, and "engine_check_failed" with the verdict's reason. Then it pins the VM's host key on the
// first start (<runtime>/colima/pybox-host-key) and reads `colima ssh-config`, answering the
// Docker socket to talk to and the SshEngine the watcher's libssh2 transport dials.
// A failed `colima start` is followed by `colima stop` too.
// stop(): `colima stop` (what stopping a stopped profile answers is colima's; not checked on a Mac).
//
// Blocking: start() takes minutes on a first start (colima downloads its disk image); call it
// off the event loop. Timeouts: start 10 min, stop 2 min, every other colima call 30 s.
// Errors: locate_colima_tools "tool_missing"/"tool_untrusted" (trusted_tools.hpp); start() "colima_too_old",
// "colima_failed" (a colima command failed; its output's tail in the message),
// "colima_output_invalid", "engine_check_failed", "host_key_pin_invalid", file errors.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/macos/colima_checks.hpp"
#include "daemon/macos/colima_profile.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pybox::macos {

struct ColimaTools {
    std::filesystem::path colima;
    std::filesystem::path docker;
};

// colima and docker from the trusted folders (locate_tool with the real file system).
Expected<ColimaTools> locate_colima_tools();

struct ColimaStarted {
    std::filesystem::path docker_socket;
    engine::SshEngine watcher_target;
};

class ColimaVm {
public:
    ColimaVm(const RuntimePaths& paths, ColimaTools tools);

    Expected<ColimaStarted> start();
    Expected<void> stop();
    // The ssh target of a VM that already runs (a daemon restart): what start() answers, with the
    // host key pinned by an earlier start (none pinned: "host_key_unpinned"). Never pins.
    Expected<engine::SshEngine> watcher_target();

    const ColimaLayout& layout() const { return m_layout; }

private:
    Expected<std::string> run_colima(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);
    Expected<ColimaFacts> gather_facts();
    Expected<std::string> pinned_host_key();
    Expected<engine::SshEngine> ssh_target(const std::optional<std::string>& fingerprint);

    ColimaLayout m_layout;
    ColimaTools m_tools;
};

}  // namespace pybox::macos
