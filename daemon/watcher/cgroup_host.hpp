// CgroupHost: the machine whose cgroup files the kernel watcher reads, and the run parents it
// keeps there. Today that is the machine pyboxd runs on (LocalCgroupHost); a remote engine's
// host over ssh plugs in behind the same interface, running the same watcher script. What is
// read (watch_script, its argv from watch_command) is decided elsewhere; this only says where.
//
// Executor: every call runs on the daemon's io_context and never blocks it for longer than a
// mkdir/rmdir in the cgroup filesystem; output and remote commands are awaited asynchronously.
#pragma once

#include "common/error.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::watcher {

namespace net = boost::asio;

// What a watcher printed, and how it ended.
struct WatchOutput {
    std::string text;       // its stdout, at most k_watch_max_output_bytes
    bool truncated = false; // it printed more than that; the rest was dropped
    // Daemon monotonic seconds from start_watch to the arrival of the watcher's first sample.
    std::optional<double> first_sample_after_s;
    bool killed = false;    // finish() had to kill it because it did not end in time
};

// One running watcher. Destroying it kills the watcher if it still runs.
class WatchSession {
public:
    virtual ~WatchSession() = default;
    // The engine reported the box's exit: ask for the final reading. Delivered as soon as the
    // watcher has announced itself (its header line), so its handler is in place.
    virtual void request_final() = 0;
    // Asks for the final reading the moment process `pid` of that host (the box's first
    // process, whose end ends every process of the box) ends: sooner than the engine's report,
    // while the box's own cgroup still exists. A host that cannot watch processes ignores it.
    virtual void final_when_ended(int pid) = 0;
    // Waits at most `timeout` for the watcher to end by itself, then kills it; returns its output.
    virtual net::awaitable<WatchOutput> finish(std::chrono::milliseconds timeout) = 0;
};

class CgroupHost {
public:
    virtual ~CgroupHost() = default;
    // Where the cgroup filesystems are mounted on that host, e.g. "/sys/fs/cgroup".
    virtual std::string mount_root() const = 0;
    // For the receipt, e.g. "this host (local cgroup files)".
    virtual std::string describe() const = 0;
    // Creates the run parent `path` (and the installation's cgroup above it) for the cgroup
    // version given; an existing directory is fine.
    virtual net::awaitable<Expected<void>> create_run_parent(int cgroup_version, std::string path) = 0;
    // Removes the run parent in every hierarchy where it exists (v1 or v2); a missing one is
    // fine. Fails ("cgroup_busy") while something still lives below it.
    virtual net::awaitable<Expected<void>> remove_run_parent(std::string path) = 0;
    // Sends SIGKILL to every process left in the run parent `path` and the cgroups below it, in
    // every hierarchy, and removes the cgroups below it that are empty; returns how many signals
    // were sent. Only for a run whose box the engine no longer has: what is there is what the
    // engine lost (a box whose start was cut short can leave runc's init behind, and its cgroup
    // once that is killed, holding the run parent busy for ever).
    virtual net::awaitable<Expected<int>> empty_run_parent(std::string path) = 0;
    // Starts the watcher command on that host.
    virtual Expected<std::unique_ptr<WatchSession>> start_watch(const std::vector<std::string>& argv) = 0;
};

}  // namespace pybox::watcher
