// SshCgroupHost: the CgroupHost of another machine reached over ssh: an ssh engine's host (an
// exec channel of the engine's SshSession per command), or the colima VM on macOS (the same, or
// `colima ssh`: daemon/macos/colima_cgroup_host.hpp); both are engine::CommandChannels. The
// watcher is the same fixed watch.sh, run by the remote /bin/sh, with the same argv
// (watch_command) and so the same output, parsed by the same strict parser. Run
// parents are made, emptied and removed by three fixed scripts (in ssh_cgroup_host.cpp) in a channel each,
// whose output (stderr joined to stdout) ends with a line holding the script's exit status.
// Every word reaches the remote shell single-quoted (shell_command); run parent paths are also
// checked to be plain ([A-Za-z0-9/_.-], absolute, no "..") before they are sent.
//
// Signals: libssh2 1.10 cannot send a signal over a channel, so the channel runs a fixed relay
// (k_watch_relay_script) that starts the watcher in the background and turns lines on its stdin
// into signals: "USR1" and "USR2" are sent on, and the end of stdin (the daemon finished or
// dropped the session, or the connection died) sends TERM, so no watcher outlives its session.
// final_when_ended() is ignored: the box's pid is another host's.
//
// Executor: everything runs on `executor` and never blocks it. start_watch() and the sessions it
// returns never wait for the remote side; create_run_parent() and remove_run_parent() await
// their command's channel and output (a few ms on a near host; at most k_cgroup_command_timeout,
// then "engine_timeout"). Failures: "cgroup_failed" or "cgroup_busy" naming the host and path,
// or the session's code ("engine_unreachable", ...) when the host is not reached or the channel
// ends before the script's exit status arrives.
#pragma once

#include "daemon/engine/command_channels.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace pybox::watcher {

inline constexpr std::chrono::milliseconds k_cgroup_command_timeout{5'000};

// The relay run in front of the watcher (see above); its argv is the watcher's.
std::string_view watch_relay_script();

// The exec command line that runs the watcher argv (watch_command) behind the relay.
std::string remote_watch_command(const std::vector<std::string>& argv);

// What one of the fixed scripts left: its exit status and its output (stderr joined to stdout).
struct ScriptResult {
    int exit_status = -1;
    std::string output;
};

class SshCgroupHost final : public CgroupHost {
public:
    SshCgroupHost(net::any_io_executor executor, std::shared_ptr<engine::CommandChannels> channels,
                  std::string mount_root = "/sys/fs/cgroup");

    std::string mount_root() const override { return m_mount_root; }
    std::string describe() const override;
    net::awaitable<Expected<void>> create_run_parent(int cgroup_version, std::string path) override;
    net::awaitable<Expected<void>> remove_run_parent(std::string path) override;
    net::awaitable<Expected<int>> empty_run_parent(std::string path) override;
    Expected<std::unique_ptr<WatchSession>> start_watch(const std::vector<std::string>& argv) override;

private:
    // Runs a fixed script with `args` to its end; its exit status and output.
    net::awaitable<Expected<ScriptResult>> run_script(std::string_view script, std::vector<std::string> args);

    net::any_io_executor m_executor;
    std::shared_ptr<engine::CommandChannels> m_channels;
    std::string m_mount_root;
};

}  // namespace pybox::watcher
