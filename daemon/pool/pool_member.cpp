#include "daemon/pool/pool_member.hpp"

#include "daemon/engine/backend_factory.hpp"
#include "daemon/macos/colima_engine_control.hpp"
#include "daemon/reconcile/run_parent_release.hpp"
#include "daemon/records/attempt_journal.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"

#include <stdexcept>

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
    macos::ColimaEngineControl* colima = nullptr;
    auto backend = std::make_unique<engine::DockerBackend>(
        executor, engine::make_unix_socket_dialer(executor, macos::ColimaLayout(context.paths).docker_socket),
        [&](engine::EngineClient& client) {
            auto control = std::make_unique<macos::ColimaEngineControl>(executor, client, context.paths,
                                                                        context.installation_id, context.config,
                                                                        recorded_images(context.registry));
            colima = control.get();
            return control;
        },
        context.config.runtime);
    seat.cgroups = &colima->cgroups();
    seat.cgroups_elsewhere = true;
    seat.local_docker = backend.get();
    seat.backend = std::move(backend);
    seat.check_at_start = true;
}
#else
void seat_platform_engine(EngineSeat& seat, net::any_io_executor executor, const PoolContext& context)
{
    auto backend = std::make_unique<engine::DockerBackend>(
        executor, engine::make_unix_socket_dialer(executor, config::engine_socket_path(context.config, context.paths)),
        [&](engine::EngineClient& client) {
            return std::make_unique<vm::PrivateEngine>(executor, client, context.paths, context.installation_id,
                                                       context.config, recorded_images(context.registry));
        },
        context.config.runtime);
    seat.local_docker = backend.get();
    seat.backend = std::move(backend);
    seat.own_cgroups = std::make_unique<watcher::LocalCgroupHost>(executor);
    seat.cgroups = seat.own_cgroups.get();
}
#endif

}  // namespace

ImageVerifier image_check(const images::ImageRegistry& registry, engine::EngineBackend& backend)
{
    return [registry, &backend](std::string name) -> net::awaitable<Expected<VerifiedImage>> {
        auto record = co_await images::verify_image_for_run(
            registry, [&backend](const images::ImageRecord& recorded) { return backend.image_state(recorded); }, name);
        if (!record) co_return record.error();
        co_return VerifiedImage{record->image_id, record->recipe_sha256};
    };
}

WarmSetup warm_setup_for(const engine::EngineBackend& backend, bool takes_runs, const WarmSetup& wanted)
{
    // An engine that takes no runs keeps no warm boxes for them.
    const bool keeps = takes_runs && backend.keeps_warm_boxes();
    return WarmSetup{keeps ? wanted.count : 0, wanted.owner_uid};
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
    seat.warm = warm_setup_for(*seat.backend, seat.takes_runs, context.warm);
    return seat;
}

Expected<EngineSeat> make_engine_seat(net::any_io_executor executor, const engine::EngineEntry& entry,
                                      const PoolContext& context)
{
    auto made = engine::make_backend(
        executor, entry,
        engine::BackendContext{context.paths, context.installation_id, context.config, recorded_images(context.registry)});
    if (!made) return made.error();
    EngineSeat seat;
    seat.id = entry.id;
    seat.backend = std::move(made->backend);
    // Without a watcher no run parent is made on that engine, so none is released.
    if (context.config.watcher) seat.own_cgroups = std::move(made->cgroups);
    seat.cgroups = seat.own_cgroups.get();
    seat.cgroups_elsewhere = made->cgroups_elsewhere;
    seat.max_runs = made->max_runs;
    seat.unwatched = std::move(made->unwatched);
    seat.warm = warm_setup_for(*seat.backend, seat.takes_runs, context.warm);
    return seat;
}

namespace {

// The daemon's queue rules, with as many runs at once as the engine takes.
RunQueueOptions queue_of(RunQueueOptions queue, std::size_t max_runs)
{
    queue.max_running = max_runs;
    return queue;
}

}  // namespace

PoolMember::PoolMember(net::any_io_executor executor, EngineSeat seat, const PoolContext& context)
    : m_seat(std::move(seat)),
      m_watch(engine_watch_setup(context.config.watcher, m_seat.cgroups, context.watch_script,
                                 m_seat.cgroups_elsewhere ? ProcessEnds{nullptr, std::string(k_ends_elsewhere)}
                                                          : context.process_ends,
                                 m_seat.unwatched)),
      m_sweeper(m_seat.backend->boxes(), AttemptLog(context.paths), AttemptJournal(context.paths), context.installation_id,
                SweepSettings{context.config.settle_after_expiry_s, &context.runs_in_progress,
                              m_seat.cgroups ? run_parent_releaser(*m_seat.cgroups, context.installation_id)
                                             : RunReleaser{},
                              m_seat.id}),
      m_runs(executor, m_seat.backend->boxes(), m_seat.backend->probe(),
             image_check(context.registry, *m_seat.backend),
             AttemptTracking{AttemptLog(context.paths), &context.runs_in_progress, context.config.box_expiry_s,
                             m_seat.id},
             context.installation_id, [this] { return m_sweeper.last_summary(); }, m_watch,
             queue_of(context.queue, m_seat.max_runs), m_seat.warm)
{
}

engine::DockerBackend& PoolMember::local_docker()
{
    if (m_seat.local_docker == nullptr)
        throw std::logic_error("PoolMember: engine " + m_seat.id + " is not the local engine, which builds the images");
    return *m_seat.local_docker;
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
