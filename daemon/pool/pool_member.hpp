// PoolMember: one engine of the pool beside the local one (config.json "engines"), with
// everything a run and a sweep on it need: its transport, Engine API client, checks (a
// vm::PrivateEngine fronting it, as for "engine_socket"), sweeper and run service with its own
// run queue. Each engine has its own attempt notes (AttemptNote::engine_id) and sweep; the
// runtime folder, image registry, journal and runs in progress are shared with the local engine.
//
// make_engine_transport() is the one place where the kind of engine is switched: a unix
// socket on this host is dialled directly and watched through this host's cgroup files (its
// boxes run on this kernel); an ssh engine gets one held libssh2 session (engine/ssh_session.hpp)
// shared by its dialer and its watcher, which runs the same watcher script on that host.
//
// Ownership: PoolContext's references must outlive every member. Not copyable or movable (the
// services hold references to each other). Runs on the daemon's io_context.
#pragma once

#include "common/paths.hpp"
#include "daemon/engine/docker_box_engine.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/reconcile/sweeper.hpp"
#include "daemon/run/attempt_journal.hpp"
#include "daemon/run/sealed_run.hpp"
#include "daemon/vm/daemon_config.hpp"
#include "daemon/vm/private_engine.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <memory>
#include <string>

namespace pybox::daemon {

// How the daemon reaches an engine and where its boxes' cgroups are watched. An ssh engine's
// dialer and CgroupHost share one held session: each may keep it alive (e.g. a shared_ptr
// inside both), since the member owns them for the daemon's lifetime.
struct EngineTransport {
    std::unique_ptr<engine::EngineDialer> dialer;
    std::unique_ptr<watcher::CgroupHost> cgroups;  // null: that engine's runs are not watched
};

Expected<EngineTransport> make_engine_transport(net::any_io_executor executor, const engine::EngineEntry& entry);

// What the members share with the local engine.
struct PoolContext {
    const RuntimePaths& paths;
    const vm::DaemonConfig& config;
    const std::string& installation_id;
    const images::ImageRegistry& registry;
    vm::RecordedImagesSource recorded_images;
    RunsInProgress& runs_in_progress;
    const std::string& watch_script;
    RunQueueOptions queue;
    WarmSetup warm;  // the count from config.json, or 0 for a system pyboxd
};

class PoolMember {
public:
    PoolMember(net::any_io_executor executor, const engine::EngineEntry& entry, EngineTransport transport,
               const PoolContext& context);
    PoolMember(const PoolMember&) = delete;
    PoolMember& operator=(const PoolMember&) = delete;

    const std::string& id() const { return m_id; }
    std::string address() const { return m_client.dialer().describe(); }
    engine::EngineClient& client() { return m_client; }
    EngineControl& control() { return m_control; }
    SealedRunService& runs() { return m_runs; }
    Sweeper& sweeper() { return m_sweeper; }

private:
    std::string m_id;
    std::unique_ptr<watcher::CgroupHost> m_cgroups;
    engine::EngineClient m_client;
    engine::DockerBoxEngine m_boxes{m_client};
    vm::PrivateEngine m_control;
    Sweeper m_sweeper;
    SealedRunService m_runs;
};

}  // namespace pybox::daemon
