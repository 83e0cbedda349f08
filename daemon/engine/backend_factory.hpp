// The one factory of the backends of config.json's "engines" entries: the entry's "kind"
// (engine_entry.hpp) picks the backend, and nothing else switches on it. What it makes:
// - the EngineBackend (engine_backend.hpp): the boxes, the engine's checks (`pybox vm start |
//   stop | status`), the image check, how images reach it, whether it keeps warm boxes;
// - where its boxes' cgroup files are read for the kernel watcher, if anywhere.
// Kind "kubernetes": a kube::KubeBackend (daemon/kube/kube_backend.hpp) in the entry's namespace,
// taking the entry's "max_runs" at once; its boxes are not watched (PyBox has no agent on the
// nodes).
// Kind "docker": a DockerBackend reached as the entry's url says. A unix socket on this host is
// dialled directly and its boxes watched through this host's cgroup files; an ssh engine gets
// one held libssh2 session (ssh_session.hpp) shared by its dialer and its watcher, which runs the
// same watcher script on that host. Its checks are a vm::PrivateEngine fronting it, as for
// "engine_socket" (never started or stopped).
// Kind "kubernetes": no backend yet; "config_invalid" saying so (issue 30 wires it).
//
// Making a backend makes no engine call. Runs on the daemon's io_context.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/engine/engine_backend.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/vm/private_engine.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>

namespace pybox::engine {

// What every backend is made with: the daemon's own, which must outlive the backends.
struct BackendContext {
    const RuntimePaths& paths;
    const std::string& installation_id;
    const config::DaemonConfig& config;
    vm::RecordedImagesSource recorded_images;  // the images every engine's checks expect
};

struct MadeBackend {
    std::unique_ptr<EngineBackend> backend;
    std::unique_ptr<watcher::CgroupHost> cgroups;  // null: that engine's runs are not watched
    bool cgroups_elsewhere = false;                // read on another machine (ssh)
    std::size_t max_runs = 1;                      // runs it takes at once
    // Why its boxes cannot be watched at all, as the receipt says it (a cluster); empty: they can.
    std::string unwatched;
};

// Fails only when the entry's transport cannot be made.
Expected<MadeBackend> make_backend(net::any_io_executor executor, const EngineEntry& entry, const BackendContext& context);

}  // namespace pybox::engine
