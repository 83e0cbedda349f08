#include "daemon/pool/pool_member.hpp"

#include "daemon/engine/ssh_dialer.hpp"
#include "daemon/reconcile/run_parent_release.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"
#include "daemon/watcher/ssh_cgroup_host.hpp"

namespace pybox::daemon {

namespace {

// The member's checks: those of an engine named by "engine_socket" (never started or stopped).
vm::DaemonConfig checks_config(const vm::DaemonConfig& config, const engine::EngineEntry& entry)
{
    vm::DaemonConfig checks = config;
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
    return transport;
}

PoolMember::PoolMember(net::any_io_executor executor, const engine::EngineEntry& entry, EngineTransport transport,
                       const PoolContext& context)
    : m_id(entry.id),
      m_cgroups(context.config.watcher ? std::move(transport.cgroups) : nullptr),
      m_client(executor, std::move(transport.dialer)),
      m_control(executor, m_client, context.paths, context.installation_id, checks_config(context.config, entry),
                context.recorded_images),
      m_sweeper(m_boxes, AttemptLog(context.paths), AttemptJournal(context.paths), context.installation_id,
                SweepSettings{context.config.settle_after_expiry_s, &context.runs_in_progress,
                              // Without a watcher no run parent is made, so none is released.
                              m_cgroups ? run_parent_releaser(*m_cgroups, context.installation_id) : RunReleaser{},
                              entry.id}),
      m_runs(executor, m_boxes, BoxRuntime{context.config.runtime},
             [this, &registry = context.registry](std::string name) -> net::awaitable<Expected<VerifiedImage>> {
                 auto record = co_await images::verify_image_for_run(registry, m_client, name);
                 if (!record) co_return record.error();
                 co_return VerifiedImage{record->image_id, record->recipe_sha256};
             },
             AttemptTracking{AttemptLog(context.paths), &context.runs_in_progress, context.config.box_expiry_s, entry.id},
             context.installation_id, [this] { return m_sweeper.last_summary(); },
             WatchSetup{m_cgroups.get(), context.watch_script}, context.queue, context.warm)
{
}

}  // namespace pybox::daemon
