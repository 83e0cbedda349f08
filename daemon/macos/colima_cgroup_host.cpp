#include "daemon/macos/colima_cgroup_host.hpp"

#include "common/api_error_codes.hpp"

namespace pybox::macos {

ColimaCgroupHost::ColimaCgroupHost(net::any_io_executor executor, std::string mount_root, engine::SshTimings timings)
    : m_executor(std::move(executor)), m_mount_root(std::move(mount_root)), m_timings(timings)
{
}

net::awaitable<void> ColimaCgroupHost::reach(engine::SshEngine direct,
                                             std::shared_ptr<engine::CommandChannels> fallback)
{
    auto session = std::make_shared<engine::SshSession>(std::move(direct), m_timings);
    auto ready = co_await session->ready(m_executor, k_direct_ssh_wait);
    if (ready) {
        m_host = std::make_shared<watcher::SshCgroupHost>(m_executor, std::move(session), m_mount_root);
        m_direct_failed.reset();
    } else {
        m_host = std::make_shared<watcher::SshCgroupHost>(m_executor, std::move(fallback), m_mount_root);
        m_direct_failed = ready.error().message;
    }
}

void ColimaCgroupHost::forget(std::string why)
{
    m_host.reset();
    m_direct_failed.reset();
    m_not_reached = std::move(why);
}

std::string ColimaCgroupHost::describe() const
{
    if (!m_host) return "the colima VM, not reached: " + m_not_reached;
    return "the colima VM: " + m_host->describe() +
           (m_direct_failed ? "; direct ssh failed: " + *m_direct_failed : std::string());
}

Error ColimaCgroupHost::unavailable() const
{
    return make_error(api_error::k_watcher_unavailable, "The kernel watcher cannot reach the colima VM: " + m_not_reached + ".");
}

net::awaitable<Expected<void>> ColimaCgroupHost::create_run_parent(int cgroup_version, std::string path)
{
    const auto host = m_host;
    if (!host) co_return unavailable();
    co_return co_await host->create_run_parent(cgroup_version, std::move(path));
}

net::awaitable<Expected<void>> ColimaCgroupHost::remove_run_parent(std::string path)
{
    const auto host = m_host;
    if (!host) co_return unavailable();
    co_return co_await host->remove_run_parent(std::move(path));
}

net::awaitable<Expected<int>> ColimaCgroupHost::empty_run_parent(std::string path)
{
    const auto host = m_host;
    if (!host) co_return unavailable();
    co_return co_await host->empty_run_parent(std::move(path));
}

Expected<std::unique_ptr<watcher::WatchSession>> ColimaCgroupHost::start_watch(const std::vector<std::string>& argv)
{
    if (!m_host) return unavailable();
    return m_host->start_watch(argv);
}

}  // namespace pybox::macos
