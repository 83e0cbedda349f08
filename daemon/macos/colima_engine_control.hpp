// ColimaEngineControl: the macOS EngineControl behind `pybox vm start | stop | status`. The
// engine is the Docker of PyBox's colima profile (colima_vm.hpp); the checks of the engine are
// the same as on Linux, run by a PrivateEngine in its external mode on the VM's Docker socket
// (ColimaLayout::docker_socket), so it never starts or stops a dockerd itself.
//
// start() locates colima and docker in the trusted folders, runs ColimaVm::start() (minutes on
// a first start), reaches the VM for the kernel watcher (cgroups(): direct ssh, else `colima
// ssh`; how, in a note of the answer), then answers the checks' start answer, with `started`
// true and `seconds` counting the VM's start. stop() runs ColimaVm::stop() and forgets the VM's
// watcher host. status() is the checks' status; it never starts anything, but when the VM's
// engine answers and the watcher has not reached the VM since the daemon started, it reaches it
// (ColimaVm::watcher_target(), the key pinned by an earlier start).
//
// Ownership: owns the watcher's ColimaCgroupHost (cgroups(), for the run service and the sweep);
// borrows the daemon's EngineClient, which must talk to the VM's Docker socket and
// outlive this object; `recorded_images` as for PrivateEngine; `locate_tools` is called on every
// start and stop (locate_colima_tools outside tests).
// Executor: every call is a coroutine on `executor`, which it never blocks: colima runs on a
// worker thread of this object and its result is posted back to the executor. Destroying the
// object waits for a colima command still running (at most ColimaVm's timeouts). start() and
// stop() are serialized: one arriving while another runs fails with "engine_busy".
// Errors: those of locate_colima_tools and ColimaVm, then those of the checks.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"
#include "daemon/macos/colima_cgroup_host.hpp"
#include "daemon/macos/colima_vm.hpp"
#include "daemon/server/services.hpp"
#include "daemon/vm/private_engine.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <functional>
#include <optional>
#include <string_view>
#include <thread>

namespace pybox::macos {

namespace net = boost::asio;

using ToolLocator = std::function<Expected<ColimaTools>()>;

class ColimaEngineControl final : public daemon::EngineControl {
public:
    ColimaEngineControl(net::any_io_executor executor, engine::EngineClient& client, const RuntimePaths& paths,
                        std::string_view installation_id, config::DaemonConfig config,
                        vm::RecordedImagesSource recorded_images, ToolLocator locate_tools = locate_colima_tools);
    ~ColimaEngineControl() override;
    ColimaEngineControl(const ColimaEngineControl&) = delete;
    ColimaEngineControl& operator=(const ColimaEngineControl&) = delete;

    net::awaitable<Expected<proto::EngineStartAnswer>> start() override;
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override;
    net::awaitable<proto::EngineStatus> status() override;

    // Where the kernel watcher reads the boxes' cgroup files: the VM, once reached.
    ColimaCgroupHost& cgroups() { return m_cgroups; }

private:
    template <class T>
    net::awaitable<T> off_the_loop(std::function<T()> work);
    net::awaitable<void> reach_running_vm();

    net::any_io_executor m_executor;
    RuntimePaths m_paths;
    ToolLocator m_locate_tools;
    vm::PrivateEngine m_checks;
    ColimaCgroupHost m_cgroups;
    std::thread m_worker;
    bool m_busy = false;
};

}  // namespace pybox::macos
