// pyboxd: the per-user PyBox daemon. Parses options and wires the services; nothing else.
#include "common/files.hpp"
#include "common/limits.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "daemon/daemon_cli.hpp"
#include "daemon/doctor/doctor_service.hpp"
#include "daemon/engine/docker_box_engine.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/images/image_recipe.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/images/image_service.hpp"
#include "daemon/macos/colima_engine_control.hpp"
#include "daemon/model/chat_completions_client.hpp"
#include "daemon/pool/engine_pool.hpp"
#include "daemon/pool/pool_control.hpp"
#include "daemon/pool/pool_member.hpp"
#include "daemon/pool/pooled_run_service.hpp"
#include "daemon/reconcile/run_parent_release.hpp"
#include "daemon/reconcile/sweeper.hpp"
#include "daemon/repair/repair_service.hpp"
#include "daemon/run/attempt_journal.hpp"
#include "daemon/run/attempt_records.hpp"
#include "daemon/run/attempts.hpp"
#include "daemon/run/installation.hpp"
#include "daemon/run/issuing_run.hpp"
#include "daemon/run/receipt_store.hpp"
#include "daemon/run/run_cgroup.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/run/sealed_run.hpp"
#include "daemon/run/warm_first_services.hpp"
#include "daemon/server/callers.hpp"
#include "daemon/server/http_server.hpp"
#include "daemon/server/socket_activation.hpp"
#include "daemon/vm/daemon_config.hpp"
#include "daemon/vm/private_engine.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"
#include "daemon/watcher/watch_script.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>
#include <list>
#include <memory>
#include <optional>

namespace net = boost::asio;
using namespace pybox;

namespace {

constexpr std::size_t k_max_watcher_script_bytes = 64 * 1024;

// The one platform switch: on macOS the engine is the Docker of PyBox's colima VM
// (docs/macos.md), whose boxes' cgroup files are the VM's: the engine control reaches the VM for
// the watcher (direct ssh, else `colima ssh`) and is checked once at start, so a daemon restarted
// while the VM runs reaches it again. Elsewhere PyBox's private dockerd or the configured
// "engine_socket", watched through this host's cgroup files.
#if defined(__APPLE__)
using PlatformEngine = macos::ColimaEngineControl;
std::filesystem::path platform_engine_socket(const vm::DaemonConfig&, const RuntimePaths& paths)
{
    return macos::ColimaLayout(paths).docker_socket;
}
watcher::CgroupHost& platform_cgroups(PlatformEngine& control, watcher::LocalCgroupHost&) { return control.cgroups(); }
constexpr bool k_check_engine_at_start = true;
#else
using PlatformEngine = vm::PrivateEngine;
std::filesystem::path platform_engine_socket(const vm::DaemonConfig& config, const RuntimePaths& paths)
{
    return vm::engine_socket_path(config, paths);
}
watcher::CgroupHost& platform_cgroups(PlatformEngine&, watcher::LocalCgroupHost& local) { return local; }
constexpr bool k_check_engine_at_start = false;
#endif

[[noreturn]] void fail(const Error& error)
{
    std::cerr << "pyboxd: " << error.message << "\n";
    std::exit(1);
}

template <class T>
T or_fail(Expected<T> result)
{
    if (!result) fail(result.error());
    return std::move(*result);
}

void or_fail(Expected<void> result)
{
    if (!result) fail(result.error());
}

// config.json's recipes_dir, else the installed recipes; without either the daemon does not start.
std::filesystem::path recipes_dir(const vm::DaemonConfig& config, const RuntimePaths& paths)
{
    if (config.recipes_dir) return *config.recipes_dir;
    auto installed = images::installed_recipes_dir();
    if (!installed)
        fail(make_error(installed.error().code, installed.error().message + " Or name a recipes folder with \"recipes_dir\" in " +
                                                    paths.config_file().string() + "."));
    return *installed;
}

// Where this daemon keeps its files and listens, and whom it serves (daemon_cli.hpp).
struct Serving {
    RuntimePaths paths;
    std::filesystem::path socket;
    daemon::HttpServerOptions server;
};

Serving serving(const daemon::DaemonOptions& options)
{
    if (!options.system) {
        auto paths = or_fail(RuntimePaths::from_environment());
        auto socket = paths.daemon_socket();
        return {std::move(paths), std::move(socket), {}};
    }
    if (current_uid() != 0)
        fail(make_error("not_root", "pyboxd --system runs as root (the system unit pyboxd.service does); a user "
                                    "runs pyboxd without --system."));
    const char* home = std::getenv("PYBOX_HOME");
    auto paths = home != nullptr && *home != '\0' ? or_fail(RuntimePaths::from_environment())
                                                  : RuntimePaths(k_system_runtime);
    const auto socket = or_fail(system_daemon_socket());
    const auto group = daemon::system_group_id();
    if (!group)
        fail(make_error("no_system_group", std::string("pyboxd --system serves the members of the ") +
                                               daemon::k_system_group + " group, and there is none. Create it with: "
                                               "addgroup --system " + daemon::k_system_group));
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
    if (ec) fail(make_error("socket_unusable", "Cannot create " + socket.parent_path().string() + ": " + ec.message()));
    daemon::HttpServerOptions server;
    server.mode = daemon::ServeMode::system;
    server.socket_group = *group;
    return {std::move(paths), socket, server};
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app;
    daemon::DaemonOptions options;
    daemon::configure_daemon_cli(app, options);
    CLI11_PARSE(app, argc, argv);
    // First, while no thread exists: LISTEN_* leave the environment here, before any child.
    const auto activated = or_fail(daemon::adopt_activated_socket());

    const Serving serve = serving(options);
    const RuntimePaths& paths = serve.paths;
    or_fail(paths.ensure_private());
    auto lifecycle = FileLock::try_acquire(paths.lifecycle_lock());
    if (!lifecycle)
        fail(make_error("daemon_already_running",
                        "another pyboxd is already running for " + paths.root().string() + "."));
    const auto config = or_fail(vm::load_daemon_config(paths));
    const std::string installation_id = or_fail(daemon::load_or_create_installation_id(paths));
    daemon::ReceiptStore receipts(paths.receipts_dir(), or_fail(daemon::load_or_create_signing_key(paths)));
    if (const auto foreign = receipts.load(); foreign > 0)
        std::cerr << "pyboxd: " << foreign << " entries of " << paths.receipts_dir().string()
                  << " are not receipts it keeps; they are left as they are\n";

    net::io_context io;
    const auto executor = io.get_executor();
    engine::EngineClient engine(executor,
                                engine::make_unix_socket_dialer(executor, platform_engine_socket(config, paths)));
    engine::DockerBoxEngine boxes(engine);
    const images::ImageRegistry registry(paths);
    images::RecipeImageService image_service(paths, engine, recipes_dir(config, paths), config.image_tar_cache_dir);
    const vm::RecordedImagesSource recorded_images = [registry]() -> Expected<std::vector<vm::RecordedImage>> {
        auto records = registry.load();
        if (!records) return records.error();
        std::vector<vm::RecordedImage> recorded;
        for (const auto& record : *records) recorded.push_back({record.name, record.image_id});
        return recorded;
    };
    PlatformEngine engine_control(executor, engine, paths, installation_id, config, recorded_images);

    watcher::LocalCgroupHost local_cgroups(executor);
    watcher::CgroupHost& cgroups = platform_cgroups(engine_control, local_cgroups);
    const std::string watch_script =
        config.watcher_script ? or_fail(read_file_capped(*config.watcher_script, k_max_watcher_script_bytes))
                              : std::string(watcher::watch_script());
    const daemon::AttemptLog attempts(paths);
    const daemon::AttemptJournal journal(paths);
    daemon::RunsInProgress runs_in_progress;
    daemon::Sweeper sweeper(boxes, attempts, journal, installation_id,
                            daemon::SweepSettings{config.settle_after_expiry_s, &runs_in_progress,
                                                  daemon::run_parent_releaser(cgroups, installation_id)});
    const auto watch_setup = daemon::local_watch_setup(config.watcher, &cgroups, watch_script);
    // A system pyboxd: users take turns and none holds more than its share of the line; no warm
    // boxes, since a warm box is labelled with its user when it is made.
    const daemon::RunQueueOptions queue{
        .max_waiting_per_owner = options.system ? limits::k_max_waiting_runs_per_user : limits::k_max_waiting_runs};
    const daemon::WarmSetup warm{options.system ? 0 : config.warm_boxes, current_uid()};
    daemon::SealedRunService runs(
        executor, boxes, daemon::BoxRuntime{config.runtime},
        [&engine, registry](std::string name) -> net::awaitable<Expected<daemon::VerifiedImage>> {
            auto record = co_await images::verify_image_for_run(registry, engine, name);
            if (!record) co_return record.error();
            co_return daemon::VerifiedImage{record->image_id, record->recipe_sha256};
        },
        daemon::AttemptTracking{attempts, &runs_in_progress, config.box_expiry_s}, installation_id,
        [&sweeper] { return sweeper.last_summary(); },
        watch_setup, queue, daemon::WarmSetup{config.local_engine ? warm.count : 0, warm.owner_uid});

    // The pool (config.json "engines"): the local engine first, then each entry with its own
    // client, checks, run queue and sweep. Without entries none of this exists and the daemon
    // serves the local engine directly, as before the pool.
    std::list<daemon::PoolMember> members;
    std::optional<daemon::EnginePool> pool;
    std::optional<daemon::PooledRunService> pooled_runs;
    std::optional<daemon::EnginePoolControl> pool_control;
    std::optional<daemon::PoolImageService> pool_images;
    if (!config.engines.empty()) {
        const daemon::PoolContext context{paths,           config,           installation_id, registry,
                                          recorded_images, runs_in_progress, watch_script,   queue,
                                          warm};
        std::vector<daemon::EnginePool::Member> pool_members{
            {std::string(engine::k_local_engine_id), engine.dialer().describe(), config.local_engine}};
        std::vector<daemon::RunService*> pool_runs{&runs};
        std::vector<daemon::PoolEngineHandles> handles{{&engine_control, &engine}};
        for (const auto& entry : config.engines) {
            auto& member = members.emplace_back(executor, entry, or_fail(daemon::make_engine_transport(executor, entry)),
                                                context);
            pool_members.push_back({member.id(), member.address(), true});
            pool_runs.push_back(&member.runs());
            handles.push_back({&member.control(), &member.client()});
        }
        pool.emplace(pool_members);
        pooled_runs.emplace(*pool, pool_runs);
        pool_control.emplace(*pool, handles, recorded_images, paths.build_dir());
        pool_images.emplace(image_service, *pool_control);
    }
    daemon::RunService& engine_runs = pooled_runs ? static_cast<daemon::RunService&>(*pooled_runs) : runs;
    // Every run's receipt is signed and kept before it goes out, each repair step's too.
    daemon::IssuingRunService run_service(engine_runs, receipts);
    // Warm boxes (config.json warm_boxes), per engine: made by keep_warm() below, removed before
    // `vm stop` stops the engine, before an image is built or removed, and when the daemon stops.
    std::vector<daemon::SealedRunService*> warm_keepers{&runs};
    for (auto& member : members) warm_keepers.push_back(&member.runs());
    const daemon::WarmBoxes warm_boxes(warm_keepers);
    daemon::WarmFirstEngineControl engines_control(
        pool_control ? static_cast<daemon::EngineControl&>(*pool_control) : engine_control, warm_boxes);
    daemon::WarmFirstImageService images_service(
        pool_images ? static_cast<daemon::ImageService&>(*pool_images) : image_service, warm_boxes);

    daemon::JournalAttemptRecords attempt_records(attempts, journal, runs_in_progress, &receipts);
    daemon::DoctorService doctor(daemon::DoctorSources{
        paths, engines_control, engine, registry, attempt_records, runs_in_progress, installation_id,
        watch_setup.host ? std::nullopt : std::optional<std::string>(watch_setup.off_reason), cgroups.mount_root(),
        &cgroups == &local_cgroups ? nullptr : &cgroups});
    daemon::HttpServerOptions server_options = serve.server;
    if (activated) server_options.activated_listener = activated->fd;
    // The repair loop asks the model of config.json, when it names one (docs/model.md).
    std::optional<model::ChatCompletionsClient> model_client;
    if (config.model) model_client.emplace(executor, *config.model);
    repair::ModelRepairService repair_service(executor, run_service, model_client ? &*model_client : nullptr,
                                              config.model ? config.model->options : model::ModelOptions{},
                                              limits::k_repair_budget);
    daemon::HttpServer server(executor, serve.socket,
                              daemon::DaemonServices{run_service, engines_control, images_service, attempt_records, doctor,
                                                     repair_service, receipts},
                              server_options);
    // The pid file first: a runtime folder that cannot take it (full, read-only) must not be left
    // with a socket nobody answers.
    or_fail(write_file_atomic(paths.daemon_pid_file(), std::to_string(current_pid()) + "\n"));
    if (auto listening = server.start(); !listening) {
        std::error_code ignored;
        std::filesystem::remove(paths.daemon_pid_file(), ignored);
        fail(listening.error());
    }

    std::list<net::cancellation_signal> stop_sweeping;
    const auto sweep_interval = std::chrono::seconds(config.sweep_interval_s);
    net::co_spawn(executor, sweeper.sweep_forever(sweep_interval),
                  net::bind_cancellation_slot(stop_sweeping.emplace_back().slot(), net::detached));
    for (auto& member : members)
        net::co_spawn(executor, member.sweeper().sweep_forever(sweep_interval),
                      net::bind_cancellation_slot(stop_sweeping.emplace_back().slot(), net::detached));
    for (auto* keeper : warm_keepers) net::co_spawn(executor, keeper->keep_warm(), net::detached);
    // Engines of the pool that are not verified are checked again as often as the sweeps run.
    if (pool_control)
        net::co_spawn(executor, pool_control->recheck_forever(sweep_interval),
                      net::bind_cancellation_slot(stop_sweeping.emplace_back().slot(), net::detached));

    net::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        std::cerr << "pyboxd: stopping; runs in progress end with their boxes removed\n";
        server.stop();
        for (auto& signal : stop_sweeping) signal.emit(net::cancellation_type::terminal);
        for (auto* keeper : warm_keepers) net::co_spawn(executor, keeper->stop_warm(), net::detached);
    });
    std::cerr << "pyboxd: listening on " << (activated ? activated->bound_path : serve.socket).string()
              << (activated ? ", a socket from the service manager," : "")
              << (options.system ? " for the pybox group" : "") << " (engine "
              << engine.dialer().describe() << ")\n";
    if (activated && activated->bound_path.lexically_normal() != serve.socket.lexically_normal())
        std::cerr << "pyboxd: clients look for " << serve.socket.string()
                  << ", not this socket: make ListenStream= in pyboxd.socket follow PYBOX_HOME\n";
    // The Engine API version is negotiated now and again whenever `pybox vm start` or `status`
    // checks the engine; a run negotiates it itself while no engine has answered yet.
    net::co_spawn(executor, engine.ping(limits::k_query_timeout),
                  [](const std::exception_ptr&, const Expected<engine::PingResult>& pinged) {
                      if (pinged)
                          std::cerr << "pyboxd: engine API " << pinged->negotiated << "\n";
                      else
                          std::cerr << "pyboxd: the engine does not answer yet: " << pinged.error().message << "\n";
                  });
    if (k_check_engine_at_start) net::co_spawn(executor, engine_control.status(), net::detached);
    // A pool's engines are checked now, so runs find them verified after a daemon restart
    // without `pybox vm start` (which checks them again and copies the images).
    if (pool_control)
        net::co_spawn(executor, pool_control->status(), [&pool](const std::exception_ptr&, const proto::EngineStatus&) {
            for (const auto& member : pool->describe())
                std::cerr << "pyboxd: engine " << member.id << " (" << member.address << "): "
                          << (member.verified ? "verified" : "not verified: " + (member.problems.empty()
                                                                                      ? std::string("?")
                                                                                      : member.problems.front().message))
                          << "\n";
        });
    io.run();
    std::filesystem::remove(paths.daemon_pid_file());
    return 0;
}
