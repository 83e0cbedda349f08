// ColimaCgroupHost: the kernel watcher's CgroupHost on macOS. Boxes run in the colima VM, so
// their cgroup files are the VM's: this is an SshCgroupHost on a direct libssh2 session into the
// VM (ColimaVm's watcher target: Lima's key, checked against the pinned host key) or, when that
// session cannot be made, on ColimaSshChannels (`colima ssh`, the seed's fallback). Which one,
// and why, is in describe() (the receipt's observed.resources.host) and in `pybox vm start`'s notes.
//
// The VM is reached only once it is known to be up: ColimaEngineControl calls reach() after
// `pybox vm start` and after a status check that found the VM's engine answering while the VM
// was not reached yet (a daemon restart), and forget() after `pybox vm stop`. Until then every call
// fails with "watcher_unavailable" saying why, so runs' resources are UNKNOWN with that reason.
//
// Executor: every call on the daemon's executor. A call in progress keeps the host it began with
// (shared), so reach() and forget() never pull one from under it. reach() waits at most
// k_direct_ssh_wait for the direct session.
#pragma once

#include "daemon/engine/command_channels.hpp"
#include "daemon/engine/ssh_session.hpp"
#include "daemon/watcher/ssh_cgroup_host.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace pybox::macos {

namespace net = boost::asio;

inline constexpr std::chrono::milliseconds k_direct_ssh_wait{10'000};

inline constexpr std::string_view k_watcher_not_reached_yet =
    "the colima VM has not been reached since pyboxd started: `pybox vm start` (or `pybox vm status`, "
    "once the VM runs) reaches it";

class ColimaCgroupHost final : public watcher::CgroupHost {
public:
    explicit ColimaCgroupHost(net::any_io_executor executor, std::string mount_root = "/sys/fs/cgroup",
                              engine::SshTimings timings = {});

    // Reaches the VM at `direct` (a libssh2 session, made ready now) or else through `fallback`.
    net::awaitable<void> reach(engine::SshEngine direct, std::shared_ptr<engine::CommandChannels> fallback);
    // The VM is gone (`why`): every later call fails until reach() again.
    void forget(std::string why);
    bool reached() const { return m_host != nullptr; }

    std::string mount_root() const override { return m_mount_root; }
    std::string describe() const override;
    net::awaitable<Expected<void>> create_run_parent(int cgroup_version, std::string path) override;
    net::awaitable<Expected<void>> remove_run_parent(std::string path) override;
    net::awaitable<Expected<int>> empty_run_parent(std::string path) override;
    Expected<std::unique_ptr<watcher::WatchSession>> start_watch(const std::vector<std::string>& argv) override;

private:
    Error unavailable() const;

    net::any_io_executor m_executor;
    std::string m_mount_root;
    engine::SshTimings m_timings;
    std::shared_ptr<watcher::SshCgroupHost> m_host;
    std::optional<std::string> m_direct_failed;  // why the fallback is in use
    std::string m_not_reached = std::string(k_watcher_not_reached_yet);
};

}  // namespace pybox::macos
