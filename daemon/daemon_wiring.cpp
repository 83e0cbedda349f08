#include "daemon/daemon_wiring.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "common/process.hpp"
#include "daemon/images/image_recipe.hpp"
#include "daemon/records/installation.hpp"
#include "daemon/server/callers.hpp"
#include "daemon/watcher/watch_script.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace pybox::daemon {

namespace {

constexpr std::size_t k_max_watcher_script_bytes = 64 * 1024;

template <class T>
T or_fail(Expected<T> result)
{
    if (!result) fail_to_start(result.error());
    return std::move(*result);
}

void or_fail(Expected<void> result)
{
    if (!result) fail_to_start(result.error());
}

Serving serving(const DaemonOptions& options)
{
    if (!options.system) {
        auto paths = or_fail(RuntimePaths::from_environment());
        auto socket = paths.daemon_socket();
        return {std::move(paths), std::move(socket), {}};
    }
    if (current_uid() != 0)
        fail_to_start(make_error(api_error::k_not_root, "pyboxd --system runs as root (the system unit pyboxd.service does); a "
                                             "user runs pyboxd without --system."));
    const char* home = std::getenv("PYBOX_HOME");
    auto paths = home != nullptr && *home != '\0' ? or_fail(RuntimePaths::from_environment())
                                                  : RuntimePaths(k_system_runtime);
    const auto socket = or_fail(system_daemon_socket());
    const auto group = system_group_id();
    if (!group)
        fail_to_start(make_error(api_error::k_no_system_group, std::string("pyboxd --system serves the members of the ") +
                                                        k_system_group + " group, and there is none. Create it with: "
                                                        "addgroup --system " + k_system_group));
    // The socket's folder is traversable by all; the socket itself is 0660 root:pybox.
    // (A folder this makes is made 0755 whatever the umask; one that exists is left as it is.)
    std::error_code ec;
    const bool made = std::filesystem::create_directories(socket.parent_path(), ec);
    if (!ec && made)
        std::filesystem::permissions(socket.parent_path(),
                                     std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                         std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                         std::filesystem::perms::others_exec,
                                     ec);
    if (ec)
        fail_to_start(
            make_error(api_error::k_socket_unusable, "Cannot create " + socket.parent_path().string() + ": " + ec.message()));
    HttpServerOptions server;
    server.mode = ServeMode::system;
    server.socket_group = *group;
    return {std::move(paths), socket, server};
}

// The runtime folder, made private and held: one pyboxd per folder.
FileLock hold_runtime(const RuntimePaths& paths)
{
    or_fail(paths.ensure_private());
    auto lifecycle = FileLock::try_acquire(paths.lifecycle_lock());
    if (!lifecycle)
        fail_to_start(make_error(api_error::k_daemon_already_running,
                                 "another pyboxd is already running for " + paths.root().string() + "."));
    return std::move(*lifecycle);
}

ReceiptStore kept_receipts(const RuntimePaths& paths)
{
    ReceiptStore receipts(paths.receipts_dir(), or_fail(load_or_create_signing_key(paths)));
    if (const auto foreign = receipts.load(); foreign > 0)
        std::cerr << "pyboxd: " << foreign << " entries of " << paths.receipts_dir().string()
                  << " are not receipts it keeps; they are left as they are\n";
    return receipts;
}

// config.json's recipes_dir, else the installed recipes; without either the daemon does not start.
std::filesystem::path recipes_dir(const config::DaemonConfig& config, const RuntimePaths& paths)
{
    if (config.recipes_dir) return *config.recipes_dir;
    auto installed = images::installed_recipes_dir();
    if (!installed)
        fail_to_start(make_error(installed.error().code,
                                 installed.error().message + " Or name a recipes folder with \"recipes_dir\" in " +
                                     paths.config_file().string() + "."));
    return *installed;
}

OpenedProcessEnds open_process_ends(net::any_io_executor executor)
{
    auto opened = watcher::ProcessEndWatcher::open(std::move(executor));
    if (auto* why = std::get_if<std::string>(&opened)) {
        std::cerr << "pyboxd: the kernel's record of process ends is not read, so receipts rest on the engine's "
                     "report of how programs ended: "
                  << *why << "\n";
        return {nullptr, ProcessEnds{nullptr, std::move(*why)}};
    }
    auto watcher = std::move(std::get<std::unique_ptr<watcher::ProcessEndWatcher>>(opened));
    ProcessEnds ends{&watcher->log(), ""};
    return {std::move(watcher), std::move(ends)};
}

std::string watch_script(const config::DaemonConfig& config)
{
    return config.watcher_script ? or_fail(read_file_capped(*config.watcher_script, k_max_watcher_script_bytes))
                                 : std::string(watcher::watch_script());
}

// A system pyboxd: users take turns and none holds more than its share of the line; no warm
// boxes, since a warm box is labelled with its user when it is made.
RunQueueOptions run_queue(const DaemonOptions& options)
{
    return RunQueueOptions{.max_waiting_per_owner = options.system ? limits::k_max_waiting_runs_per_user
                                                                   : limits::k_max_waiting_runs};
}

WarmSetup warm_setup(const DaemonOptions& options, const config::DaemonConfig& config)
{
    return WarmSetup{options.system ? 0 : config.warm_boxes, current_uid()};
}

std::vector<SealedRunService*> warm_keepers(std::list<PoolMember>& members)
{
    std::vector<SealedRunService*> keepers;
    for (auto& member : members) keepers.push_back(&member.runs());
    return keepers;
}

std::optional<std::string> watcher_off_reason(const WatchSetup& watch)
{
    if (watch.host) return std::nullopt;
    return watch.off_reason;
}

}  // namespace

void fail_to_start(const Error& error)
{
    std::cerr << "pyboxd: " << error.message << "\n";
    std::exit(1);
}

Daemon::Daemon(const DaemonOptions& options, std::optional<ActivatedSocket> activated)
    : m_options(options),
      m_activated(std::move(activated)),
      m_serving(serving(m_options)),
      m_lifecycle(hold_runtime(m_serving.paths)),
      m_config(or_fail(config::load_daemon_config(m_serving.paths))),
      m_installation_id(or_fail(load_or_create_installation_id(m_serving.paths))),
      m_receipts(kept_receipts(m_serving.paths)),
      m_registry(m_serving.paths),
      m_recipes_dir(recipes_dir(m_config, m_serving.paths)),
      m_watch_script(watch_script(m_config)),
      m_process_ends(open_process_ends(m_io.get_executor())),
      m_attempts(m_serving.paths),
      m_journal(m_serving.paths),
      m_members(or_fail(make_pool_members(
          m_io.get_executor(),
          PoolContext{m_serving.paths, m_config, m_installation_id, m_registry, m_runs_in_progress, m_watch_script,
                      m_process_ends.ends, run_queue(m_options), warm_setup(m_options, m_config)}))),
      m_image_service(m_serving.paths, local().local_docker().client(), m_recipes_dir, m_config.image_tar_cache_dir,
                      m_config.stdlib_image),
      m_pool(m_config.engines.empty()
                 ? nullptr
                 : std::make_unique<PoolServices>(m_members, m_image_service, m_registry, m_serving.paths.build_dir())),
      m_runs(engine_runs(), m_receipts),
      m_warm_boxes(warm_keepers(m_members)),
      m_engine_control(m_pool ? m_pool->control() : local().control(), m_warm_boxes),
      m_images(m_pool ? m_pool->images() : m_image_service, m_warm_boxes),
      m_attempt_records(m_attempts, m_journal, m_runs_in_progress, &m_receipts),
      m_doctor(DoctorSources{m_serving.paths, m_engine_control, local().local_docker(), m_registry, m_attempt_records,
                             m_runs_in_progress, m_installation_id, watcher_off_reason(local().watch()),
                             local().cgroups()->mount_root(),
                             local().cgroups_elsewhere() ? local().cgroups() : nullptr}),
      m_model(m_config.model ? std::make_unique<model::ChatCompletionsClient>(m_io.get_executor(), *m_config.model)
                             : nullptr),
      m_repair(m_io.get_executor(), m_runs, m_model.get(),
               m_config.model ? m_config.model->options : model::ModelOptions{}, limits::k_repair_budget),
      m_server(m_io.get_executor(), m_serving.socket,
               DaemonServices{m_runs, m_engine_control, m_images, m_attempt_records, m_doctor, m_repair,
                              m_receipts},
               server_options())
{
}

EngineRunService& Daemon::engine_runs()
{
    if (m_pool) return m_pool->runs();
    return local().runs();
}

HttpServerOptions Daemon::server_options() const
{
    HttpServerOptions options = m_serving.server;
    if (m_activated) options.activated_listener = m_activated->fd;
    return options;
}

void Daemon::log_listening() const
{
    const auto& socket = m_serving.socket;
    std::cerr << "pyboxd: listening on " << (m_activated ? m_activated->bound_path : socket).string()
              << (m_activated ? ", a socket from the service manager," : "")
              << (m_options.system ? " for the pybox group" : "") << " (engine " << m_members.front().address()
              << ")\n";
    if (m_activated && m_activated->bound_path.lexically_normal() != socket.lexically_normal())
        std::cerr << "pyboxd: clients look for " << socket.string()
                  << ", not this socket: make ListenStream= in pyboxd.socket follow PYBOX_HOME\n";
}

int Daemon::run()
{
    const RuntimePaths& paths = m_serving.paths;
    const auto executor = m_io.get_executor();
    // The pid file first: a runtime folder that cannot take it (full, read-only) must not be left
    // with a socket nobody answers.
    or_fail(write_file_atomic(paths.daemon_pid_file(), std::to_string(current_pid()) + "\n"));
    if (auto listening = m_server.start(); !listening) {
        std::error_code ignored;
        std::filesystem::remove(paths.daemon_pid_file(), ignored);
        fail_to_start(listening.error());
    }

    std::list<net::cancellation_signal> stop_sweeping;
    const auto sweep_interval = std::chrono::seconds(m_config.sweep_interval_s);
    for (auto& member : m_members)
        net::co_spawn(executor, member.sweeper().sweep_forever(sweep_interval),
                      net::bind_cancellation_slot(stop_sweeping.emplace_back().slot(), net::detached));
    for (auto& member : m_members) net::co_spawn(executor, member.runs().keep_warm(), net::detached);
    // Engines of the pool that are not verified are checked again as often as the sweeps run.
    if (m_pool)
        net::co_spawn(executor, m_pool->control().recheck_forever(sweep_interval),
                      net::bind_cancellation_slot(stop_sweeping.emplace_back().slot(), net::detached));

    net::signal_set signals(m_io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        std::cerr << "pyboxd: stopping; runs in progress end with their boxes removed\n";
        m_server.stop();
        for (auto& signal : stop_sweeping) signal.emit(net::cancellation_type::terminal);
        for (auto& member : m_members) net::co_spawn(executor, member.runs().stop_warm(), net::detached);
        if (m_process_ends.watcher) m_process_ends.watcher->stop_when_idle();
    });
    log_listening();
    // The Engine API version is negotiated now and again whenever `pybox vm start` or `status`
    // checks the engine; a run negotiates it itself while no engine has answered yet.
    net::co_spawn(executor, local().local_docker().client().ping(limits::k_query_timeout),
                  [](const std::exception_ptr&, const Expected<engine::PingResult>& pinged) {
                      if (pinged)
                          std::cerr << "pyboxd: engine API " << pinged->negotiated << "\n";
                      else
                          std::cerr << "pyboxd: the engine does not answer yet: " << pinged.error().message << "\n";
                  });
    if (local().check_at_start()) net::co_spawn(executor, local().control().status(), net::detached);
    // A pool's engines are checked now, so runs find them verified after a daemon restart
    // without `pybox vm start` (which checks them again and copies the images).
    if (m_pool)
        net::co_spawn(executor, m_pool->control().status(), [this](const std::exception_ptr&, const proto::EngineStatus&) {
            for (const auto& member : m_pool->pool().describe())
                std::cerr << "pyboxd: engine " << member.id << " (" << member.address << "): "
                          << (member.verified ? "verified" : "not verified: " + (member.problems.empty()
                                                                                      ? std::string("?")
                                                                                      : member.problems.front().message))
                          << "\n";
        });
    m_io.run();
    std::filesystem::remove(paths.daemon_pid_file());
    return 0;
}

}  // namespace pybox::daemon
