// LocalCgroupHost: the CgroupHost of the machine pyboxd runs on. Run parents are plain
// directories in the cgroup filesystems below `mount_root`; the watcher is a child process whose
// stdout is read through an Asio stream descriptor, so no read blocks the event loop.
//
// Ownership: holds the executor only; every WatchSession it returns must be finished or
// destroyed on that executor. Failure: spawning fails with "spawn_failed"; directory calls fail
// with "cgroup_failed" (or "cgroup_busy") naming the path and the system's reason.
#pragma once

#include "daemon/watcher/cgroup_host.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <filesystem>

namespace pybox::watcher {

class LocalCgroupHost final : public CgroupHost {
public:
    // `description` is the receipt's observed.resources.host: which engine's boxes it watches
    // when several engines share this host (the pool's unix-socket engines).
    LocalCgroupHost(net::any_io_executor executor, std::filesystem::path mount_root = "/sys/fs/cgroup",
                    std::string description = "this host (local cgroup files)");

    std::string mount_root() const override { return m_mount_root.string(); }
    std::string describe() const override { return m_description; }
    net::awaitable<Expected<void>> create_run_parent(int cgroup_version, std::string path) override;
    net::awaitable<Expected<void>> remove_run_parent(std::string path) override;
    net::awaitable<Expected<int>> empty_run_parent(std::string path) override;
    Expected<std::unique_ptr<WatchSession>> start_watch(const std::vector<std::string>& argv) override;

private:
    net::any_io_executor m_executor;
    std::filesystem::path m_mount_root;
    std::string m_description;
};

}  // namespace pybox::watcher
