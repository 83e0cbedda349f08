// PoolMember: one engine the daemon runs on, with everything a run and a sweep on it need: its
// backend (engine/engine_backend.hpp: its boxes, checks for `pybox vm start | stop | status`,
// image check and images), sweeper and run service with its own run queue. Every engine has the
// same stack: the local engine is member 0 (id engine::k_local_engine_id), then each
// config.json "engines" entry in order. Each engine has its own attempt notes
// (AttemptNote::engine_id) and sweep; the runtime folder, image registry, journal and runs in
// progress are shared by all.
//
// The seats (make_local_seat, make_engine_seat) decide what differs between engines; nothing
// else does:
// - the local engine: a Docker engine by nature (it builds the images), a DockerBackend with the
//   platform's engine control (the one platform switch: on macOS the Docker of PyBox's colima
//   VM, docs/macos.md, checked once at start so a restarted daemon reaches the VM's watcher
//   again; elsewhere PyBox's private dockerd or "engine_socket"), its boxes watched where that
//   control says (this host's cgroup files, or the VM's), warm boxes only when config.json's
//   "local_engine" lets it take runs;
// - an entry: the backend engine::make_backend() makes from its kind (the one place where the
//   kind of engine is switched), watched where that backend says, warm boxes only where the
//   backend can keep them.
//
// Ownership: PoolContext's references must outlive every member. Not copyable or movable (the
// services hold references to each other). Constructing makes no engine call. Runs on the
// daemon's io_context.
#pragma once

#include "common/paths.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/engine/docker_backend.hpp"
#include "daemon/engine/engine_backend.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/reconcile/sweeper.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/run/sealed_run.hpp"
#include "daemon/vm/private_engine.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <list>
#include <memory>
#include <string>

namespace pybox::daemon {

// The check of a run's image on one engine: the image recorded in `registry`
// (images::verify_image_for_run), as that engine's backend finds it.
ImageVerifier image_check(const images::ImageRegistry& registry, engine::EngineBackend& backend);
// The warm boxes an engine keeps: the daemon's (`wanted`) where it takes runs and its backend
// can keep warm boxes, else none.
WarmSetup warm_setup_for(const engine::EngineBackend& backend, bool takes_runs, const WarmSetup& wanted);
// The images every engine's checks expect: those recorded in `registry`.
vm::RecordedImagesSource recorded_images(const images::ImageRegistry& registry);

// What every engine shares.
struct PoolContext {
    const RuntimePaths& paths;
    const config::DaemonConfig& config;
    const std::string& installation_id;
    const images::ImageRegistry& registry;
    RunsInProgress& runs_in_progress;
    const std::string& watch_script;
    // The kernel's record of process ends on this host, for the engines whose boxes run on it.
    const ProcessEnds& process_ends;
    RunQueueOptions queue;
    WarmSetup warm;  // the count from config.json, or 0 for a system pyboxd
};

// What differs from one engine to the next, as the seats decide it.
struct EngineSeat {
    std::string id;
    std::unique_ptr<engine::EngineBackend> backend;
    // The local engine's backend, a Docker engine by nature: it builds the images, and the
    // doctor reads its /info (set only by make_local_seat; points into `backend`).
    engine::DockerBackend* local_docker = nullptr;
    std::unique_ptr<watcher::CgroupHost> own_cgroups;
    // Where its boxes' cgroup files are read: own_cgroups, the control's, or null (not watched,
    // and no run parent to release).
    watcher::CgroupHost* cgroups = nullptr;
    bool cgroups_elsewhere = false;  // read on another machine (an ssh engine's host, the colima VM)
    bool takes_runs = true;          // EnginePool::Member::takes_runs
    std::size_t max_runs = 1;        // runs at once (a cluster's "max_runs"; one on a Docker engine)
    std::string unwatched;           // MadeBackend::unwatched
    WarmSetup warm;
    bool check_at_start = false;  // the daemon asks control().status() once when it starts
};

EngineSeat make_local_seat(net::any_io_executor executor, const PoolContext& context);
Expected<EngineSeat> make_engine_seat(net::any_io_executor executor, const engine::EngineEntry& entry,
                                      const PoolContext& context);

class PoolMember {
public:
    PoolMember(net::any_io_executor executor, EngineSeat seat, const PoolContext& context);
    PoolMember(const PoolMember&) = delete;
    PoolMember& operator=(const PoolMember&) = delete;

    const std::string& id() const { return m_seat.id; }
    std::string address() const { return m_seat.backend->describe(); }
    bool takes_runs() const { return m_seat.takes_runs; }
    std::size_t max_runs() const { return m_seat.max_runs; }
    const WarmSetup& warm() const { return m_seat.warm; }
    bool check_at_start() const { return m_seat.check_at_start; }
    engine::EngineBackend& backend() { return *m_seat.backend; }
    EngineControl& control() { return m_seat.backend->control(); }
    // The local member's backend, as the Docker engine it is (EngineSeat::local_docker). A
    // logic_error on another member.
    engine::DockerBackend& local_docker();
    // Null when the seat has none (see EngineSeat::cgroups).
    const watcher::CgroupHost* cgroups() const { return m_seat.cgroups; }
    bool cgroups_elsewhere() const { return m_seat.cgroups_elsewhere; }
    const WatchSetup& watch() const { return m_watch; }
    SealedRunService& runs() { return m_runs; }
    Sweeper& sweeper() { return m_sweeper; }

private:
    EngineSeat m_seat;
    WatchSetup m_watch;
    Sweeper m_sweeper;
    SealedRunService m_runs;
};

// Every engine the daemon runs on: the local one first, then config.json's "engines" in order.
// Fails as engine::make_backend() does.
Expected<std::list<PoolMember>> make_pool_members(net::any_io_executor executor, const PoolContext& context);

}  // namespace pybox::daemon
