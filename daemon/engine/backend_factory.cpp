#include "daemon/engine/backend_factory.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/engine/docker_backend.hpp"
#include "daemon/engine/ssh_dialer.hpp"
#include "daemon/engine/ssh_session.hpp"
#include "daemon/kube/kube_backend.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"
#include "daemon/watcher/ssh_cgroup_host.hpp"

#include <utility>
#include <variant>

namespace pybox::engine {

namespace {

// The checks of a Docker entry: those of an engine named by "engine_socket" (never started or
// stopped).
config::DaemonConfig checks_config(const config::DaemonConfig& config, const EngineEntry& entry)
{
    config::DaemonConfig checks = config;
    if (const auto* unix_socket = std::get_if<UnixSocketEngine>(&entry.where))
        checks.engine_socket = unix_socket->socket;
    else
        checks.engine_socket = std::get<SshEngine>(entry.where).engine_socket;
    checks.engines.clear();
    return checks;
}

MadeBackend make_docker_backend(net::any_io_executor executor, const EngineEntry& entry, const BackendContext& context)
{
    std::unique_ptr<EngineDialer> dialer;
    MadeBackend made;
    if (const auto* unix_socket = std::get_if<UnixSocketEngine>(&entry.where)) {
        dialer = make_unix_socket_dialer(executor, unix_socket->socket);
        // The engine runs on this kernel, so its boxes' cgroups are this host's cgroup files.
        made.cgroups = std::make_unique<watcher::LocalCgroupHost>(
            executor, "/sys/fs/cgroup",
            "this host (local cgroup files; engine " + entry.id + " is a unix socket on this host)");
    } else {
        // An engine on another host: one held ssh session carries its Engine API connections
        // (exec channels running socat) and its watcher (the same script, run on that host).
        auto session = std::make_shared<SshSession>(std::get<SshEngine>(entry.where));
        dialer = make_ssh_dialer(executor, session);
        made.cgroups = std::make_unique<watcher::SshCgroupHost>(executor, std::move(session));
        made.cgroups_elsewhere = true;
    }
    made.backend = std::make_unique<DockerBackend>(executor, std::move(dialer), [&](EngineClient& client) {
        return std::make_unique<vm::PrivateEngine>(executor, client, context.paths, context.installation_id,
                                                   checks_config(context.config, entry), context.recorded_images);
    }, context.config.runtime);
    return made;
}

// A cluster: its boxes are Pods on nodes PyBox does not reach, so they are not watched.
MadeBackend make_kube_backend(const EngineEntry& entry, const BackendContext& context)
{
    MadeBackend made;
    made.backend = std::make_unique<kube::KubeBackend>(entry.id, std::get<KubeEngine>(entry.where),
                                                       context.paths.pushed_images_file(entry.id),
                                                       context.recorded_images);
    made.max_runs = std::get<KubeEngine>(entry.where).max_runs;
    made.unwatched = std::string(kube::k_pods_unwatched);
    return made;
}

}  // namespace

Expected<MadeBackend> make_backend(net::any_io_executor executor, const EngineEntry& entry, const BackendContext& context)
{
    switch (entry.kind) {
    case EngineKind::docker: return make_docker_backend(std::move(executor), entry, context);
    case EngineKind::kubernetes: return make_kube_backend(entry, context);
    }
    return make_error(api_error::k_config_invalid, "engine " + entry.id + " has a kind this build has no backend for");
}

}  // namespace pybox::engine
