#include "daemon/pool/pool_member.hpp"

#include "daemon/engine/ssh_dialer.hpp"
#include "daemon/macos/colima_engine_control.hpp"
#include "daemon/reconcile/run_parent_release.hpp"
#include "daemon/records/attempt_journal.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"
#include "daemon/watcher/ssh_cgroup_host.hpp"

namespace pybox::daemon {

namespace {

// Why the receipts of an engine on another machine (an ssh host, the colima VM) rest on the
// engine's report of how the program ended.
constexpr std::string_view k_ends_elsewhere =
    "the engine's boxes run on another machine, whose kernel's record of process ends this daemon does not read";


// The local engine's control and where its boxes are watched: the one platform switch (see the
// header). The watcher's host is kept when config.json switches the watcher off: the local
// sweep still releases run parents (those of runs made while the watcher was on).
#if defined(__APPLE__)
void seat_platform_engine(EngineSeat& seat, net::any_io_executor executor, const PoolContext& context)
{
    seat.client = std::make_unique<engine::EngineClient>(
        executor, engine::make_unix_socket_dialer(executor, macos::ColimaLayout(context.paths).docker_socket));
    auto control = std::make_unique<macos::ColimaEngineControl>(executor, *seat.client, context.paths,
                                                                context.installation_id, context.config,
                                                                recorded_images(context.registry));
    seat.cgroups = &control->cgroups();
    seat.cgroups_elsewhere = true;
    seat.control = std::move(control);
    seat.check_at_start = true;
}
#else
void seat_platform_engine(EngineSeat& seat, net::any_io_executor executor, const PoolContext& context)
{
    seat.client = std::make_unique<engine::EngineClient>(
        executor, engine::make_unix_socket_dialer(executor, config::engine_socket_path(context.config, context.paths)));
    seat.control = std::make_unique<vm::PrivateEngine>(executor, *seat.client, context.paths, context.installation_id,
                                                       context.config, recorded_images(context.registry));
    seat.own_cgroups = std::make_unique<watcher::LocalCgroupHost>(executor);
    seat.cgroups = seat.own_cgroups.get();
}
#endif

// The checks of an entry: those of an engine named by "engine_socket" (never started or stopped).
config::DaemonConfig checks_config(const config::DaemonConfig& config, const engine::EngineEntry& entry)
{
    config::DaemonConfig checks = config;
    if (const auto* unix_socket = std::get_if<engine::UnixSocketEngine>(&entry.where))
        checks.engine_socket = unix_socket->socket;
    else
        checks.engine_socket = std::get<engine::SshEngine>(entry.where).engine_socket;
    checks.engines.clear();
    return checks;
}

}  // namespace

Expected<EngineTransport> make_engine_transport(net::any_io_executor executor, const engine::EngineEntry& entry)
{
    if (const auto* unix_socket = std::get_if<engine::UnixSocketEngine>(&entry.where)) {
        EngineTransport transport;
        transport.dialer = engine::make_unix_socket_dialer(executor, unix_socket->socket);
        // The engine runs on this kernel, so its boxes' cgroups are this host's cgroup files.
        transport.cgroups = std::make_unique<watcher::LocalCgroupHost>(
            executor, "/sys/fs/cgroup",
            "this host (local cgroup files; engine " + entry.id + " is a unix socket on this host)");
        return transport;
    }
    // An engine on another host: one held ssh session carries its Engine API connections (exec
    // channels running socat) and its watcher (the same script, run on that host).
    auto session = std::make_shared<engine::SshSession>(std::get<engine::SshEngine>(entry.where));
    EngineTransport transport;
    transport.dialer = engine::make_ssh_dialer(executor, session);
    transport.cgroups = std::make_unique<watcher::SshCgroupHost>(executor, std::move(session));
    transport.cgroups_elsewhere = true;
    return transport;
}

ImageVerifier image_check(const images::ImageRegistry& registry, engine::EngineClient& client)
{
    return [registry, &client](std::string name) -> net::awaitable<Expected<VerifiedImage>> {
        auto record = co_await images::verify_image_for_run(registry, client, name);
        if (!record) co_return record.error();
        co_return VerifiedImage{record->image_id, record->recipe_sha256};
    };
}

vm::RecordedImagesSource recorded_images(const images::ImageRegistry& registry)
{
    return [registry]() -> Expected<std::vector<vm::RecordedImage>> {
        auto records = registry.load();
        if (!records) return records.error();
        std::vector<vm::RecordedImage> recorded;
        for (const auto& record : *records) recorded.push_back({record.name, record.image_id});
        return recorded;
    };
}

EngineSeat make_local_seat(net::any_io_executor executor, const PoolContext& context)
{
    EngineSeat seat;
    seat.id = std::string(engine::k_local_engine_id);
    seat_platform_engine(seat, executor, context);
    seat.takes_runs = context.config.local_engine;
    // An engine that takes no runs keeps no warm boxes for them.
    seat.warm = WarmSetup{context.config.local_engine ? context.warm.count : 0, context.warm.owner_uid};
    return seat;
}

Expected<EngineSeat> make_engine_seat(net::any_io_executor executor, const engine::EngineEntry& entry,
                                      const PoolContext& context)
{
    auto transport = make_engine_transport(executor, entry);
    if (!transport) return transport.error();
    EngineSeat seat;
    seat.id = entry.id;
    seat.client = std::make_unique<engine::EngineClient>(executor, std::move(transport->dialer));
    seat.control = std::make_unique<vm::PrivateEngine>(executor, *seat.client, context.paths, context.installation_id,
                                                       checks_config(context.config, entry),
                                                       recorded_images(context.registry));
    // Without a watcher no run parent is made on that engine, so none is released.
    if (context.config.watcher) seat.own_cgroups = std::move(transport->cgroups);
    seat.cgroups = seat.own_cgroups.get();
    seat.cgroups_elsewhere = transport->cgroups_elsewhere;
    seat.warm = context.warm;
    return seat;
}

PoolMember::PoolMember(net::any_io_executor executor, EngineSeat seat, const PoolContext& context)
    : m_seat(std::move(seat)),
      m_boxes(*m_seat.client),
      m_watch(engine_watch_setup(context.config.watcher, m_seat.cgroups, context.watch_script,
                                 m_seat.cgroups_elsewhere ? ProcessEnds{nullptr, std::string(k_ends_elsewhere)}
                                                          : context.process_ends)),
      m_sweeper(m_boxes, AttemptLog(context.paths), AttemptJournal(context.paths), context.installation_id,
                SweepSettings{context.config.settle_after_expiry_s, &context.runs_in_progress,
                              m_seat.cgroups ? run_parent_releaser(*m_seat.cgroups, context.installation_id)
                                             : RunReleaser{},
                              m_seat.id}),
      m_runs(executor, m_boxes, BoxRuntime{context.config.runtime}, image_check(context.registry, *m_seat.client),
             AttemptTracking{AttemptLog(context.paths), &context.runs_in_progress, context.config.box_expiry_s,
                             m_seat.id},
             context.installation_id, [this] { return m_sweeper.last_summary(); }, m_watch, context.queue,
             m_seat.warm)
{
}

Expected<std::list<PoolMember>> make_pool_members(net::any_io_executor executor, const PoolContext& context)
{
    std::list<PoolMember> members;
    members.emplace_back(executor, make_local_seat(executor, context), context);
    for (const auto& entry : context.config.engines) {
        auto seat = make_engine_seat(executor, entry, context);
        if (!seat) return seat.error();
        members.emplace_back(executor, std::move(*seat), context);
    }
    return members;
}

}  // namespace pybox::daemon
