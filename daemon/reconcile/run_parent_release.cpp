#include "daemon/reconcile/run_parent_release.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/run/run_cgroup.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <iostream>

namespace pybox::daemon {

namespace net = boost::asio;

namespace {

net::awaitable<Expected<void>> release(watcher::CgroupHost& host, std::string path, std::string run_id)
{
    auto removed = co_await host.remove_run_parent(path);
    net::steady_timer wait(co_await net::this_coro::executor);
    for (int retry = 0; retry < k_release_retries && !removed && removed.error().code == api_error::k_cgroup_busy; ++retry) {
        // Killed processes leave their cgroups a moment later: empty it again on every retry.
        auto killed = co_await host.empty_run_parent(path);
        if (!killed) co_return killed.error();
        if (*killed > 0)
            std::cerr << "pyboxd: run " << run_id.substr(0, 8) << ": sent SIGKILL " << *killed
                      << " time(s) to what was left in its run parent " << path
                      << " by a box the engine no longer has\n";
        wait.expires_after(k_release_retry_interval);
        (void)co_await wait.async_wait(net::as_tuple(net::use_awaitable));
        removed = co_await host.remove_run_parent(path);
    }
    co_return removed;
}

}  // namespace

RunReleaser run_parent_releaser(watcher::CgroupHost& host, std::string installation_id)
{
    return [&host, installation_id = std::move(installation_id)](const std::string& run_id) {
        return release(host, run_parent_path(installation_id, run_id), run_id);
    };
}

}  // namespace pybox::daemon
