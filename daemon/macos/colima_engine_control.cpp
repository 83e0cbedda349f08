#include "daemon/macos/colima_engine_control.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/scoped_flag.hpp"
#include "daemon/macos/colima_ssh_channels.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace pybox::macos {

namespace {

config::DaemonConfig on_colima_socket(config::DaemonConfig config, const RuntimePaths& paths)
{
    config.engine_socket = ColimaLayout(paths).docker_socket;
    return config;
}

Error busy_error() { return make_error(api_error::k_engine_busy, "Another `pybox vm start` or `stop` is in progress."); }

}  // namespace

ColimaEngineControl::ColimaEngineControl(net::any_io_executor executor, engine::EngineClient& client,
                                         const RuntimePaths& paths, std::string_view installation_id,
                                         config::DaemonConfig config, vm::RecordedImagesSource recorded_images,
                                         ToolLocator locate_tools)
    : m_executor(executor), m_paths(paths), m_locate_tools(std::move(locate_tools)),
      m_checks(executor, client, paths, installation_id, on_colima_socket(std::move(config), paths),
               std::move(recorded_images)),
      m_cgroups(executor)
{
}

ColimaEngineControl::~ColimaEngineControl()
{
    if (m_worker.joinable()) m_worker.join();
}

// Runs `work` on m_worker; its result is handed to the awaiting coroutine on m_executor.
template <class T>
net::awaitable<T> ColimaEngineControl::off_the_loop(std::function<T()> work)
{
    if (m_worker.joinable()) m_worker.join();  // the previous command, already finished
    struct Delivery {
        explicit Delivery(const net::any_io_executor& executor) : delivered(executor, MonoClock::time_point::max()) {}
        net::steady_timer delivered;  // cancelled once `result` is set
        std::optional<T> result;
    };
    auto delivery = std::make_shared<Delivery>(m_executor);
    // The guard keeps the executor's io_context running until the result is delivered.
    m_worker = std::thread([delivery, guard = net::make_work_guard(m_executor), work = std::move(work)]() mutable {
        auto result = work();
        net::post(guard.get_executor(), [delivery = std::move(delivery), result = std::move(result)]() mutable {
            delivery->result.emplace(std::move(result));
            delivery->delivered.cancel();
        });
    });
    co_await delivery->delivered.async_wait(net::as_tuple(net::use_awaitable));
    co_return std::move(*delivery->result);
}

net::awaitable<Expected<proto::EngineStartAnswer>> ColimaEngineControl::start()
{
    if (m_busy) co_return busy_error();
    const ScopedFlag busy(m_busy);
    const auto begun = MonoClock::now();
    auto tools = m_locate_tools();
    if (!tools) co_return tools.error();
    // Named, not a temporary argument: GCC 12 destroys a coroutine's temporary argument twice.
    std::function<Expected<ColimaStarted>()> start_vm = [vm = ColimaVm(m_paths, *tools)]() mutable { return vm.start(); };
    auto started = co_await off_the_loop(std::move(start_vm));
    if (!started) co_return started.error();
    co_await m_cgroups.reach(started->watcher_target,
                             std::make_shared<ColimaSshChannels>(ColimaLayout(m_paths), tools->colima));
    auto answer = co_await m_checks.start();
    if (!answer) co_return answer.error();
    answer->notes.push_back("kernel watcher: " + m_cgroups.describe());
    answer->started = true;
    answer->seconds = seconds_between(begun, MonoClock::now());
    co_return answer;
}

net::awaitable<Expected<proto::EngineStopAnswer>> ColimaEngineControl::stop()
{
    if (m_busy) co_return busy_error();
    const ScopedFlag busy(m_busy);
    const auto begun = MonoClock::now();
    auto tools = m_locate_tools();
    if (!tools) co_return tools.error();
    std::function<Expected<void>()> stop_vm = [vm = ColimaVm(m_paths, *tools)]() mutable { return vm.stop(); };
    auto stopped = co_await off_the_loop(std::move(stop_vm));
    if (!stopped) co_return stopped.error();
    m_cgroups.forget("the colima VM was stopped by `pybox vm stop`");
    co_return proto::EngineStopAnswer{false, true, false, ColimaLayout(m_paths).docker_socket.string(),
                                      seconds_between(begun, MonoClock::now()), {}};
}

net::awaitable<proto::EngineStatus> ColimaEngineControl::status()
{
    auto status = co_await m_checks.status();
    if (status.running && !m_cgroups.reached() && !m_busy) co_await reach_running_vm();
    if (status.running) status.notes.push_back("kernel watcher: " + m_cgroups.describe());
    co_return status;
}

net::awaitable<void> ColimaEngineControl::reach_running_vm()
{
    const ScopedFlag busy(m_busy);
    auto tools = m_locate_tools();
    if (!tools) {
        m_cgroups.forget(tools.error().message);
        co_return;
    }
    std::function<Expected<engine::SshEngine>()> read_target = [vm = ColimaVm(m_paths, *tools)]() mutable {
        return vm.watcher_target();
    };
    auto target = co_await off_the_loop(std::move(read_target));
    if (!target) {
        m_cgroups.forget(target.error().message);
        co_return;
    }
    co_await m_cgroups.reach(std::move(*target),
                             std::make_shared<ColimaSshChannels>(ColimaLayout(m_paths), tools->colima));
}

}  // namespace pybox::macos
