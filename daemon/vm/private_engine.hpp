// PrivateEngine: the Linux EngineControl behind `pybox vm start | stop | status`.
//
// Without "engine_socket" in config.json it runs PyBox's private dockerd: own unix socket
// under <runtime>/engine/, own data-root and exec-root under /var/lib/pybox/<engine key>/
// (engine_process.hpp: outside the user's home, so a box cannot read it), an empty --config-file (so
// /etc/docker/daemon.json is never read), no TCP listener, no bridge, no iptables, logging off.
// That needs root; other users get "private_engine_needs_root" saying what to do instead.
// With "engine_socket" it fronts that engine: the same checks apply, but it is never started
// or stopped by PyBox.
//
// start() first checks dockerd and what it runs as root (engine_binaries.hpp: owned by root,
// writable by no one else; "tool_untrusted" naming the path and why otherwise, before anything
// is made or started), recovers from a killed engine (stale pid files, sockets, a leftover
// containerd of ours, the data-root mount), spawns dockerd with PATH set to k_engine_path (so
// it runs the helpers checked), waits for /_ping, then checks the engine
// (engine_checks.hpp) and the recorded images. A failed check stops the private engine again
// and yields "engine_check_failed" naming each check and why. No images recorded yet is a note,
// not a failure. stop() is idempotent. status() never starts anything and costs a ping, an
// info and one image inspect per recorded image.
//
// Ownership: borrows the daemon's EngineClient, which must talk to the same socket
// (engine_socket_path) and outlive this object: the ping of every check (start, status)
// negotiates the Engine API version that the daemon's other calls then use. `recorded_images`
// is called on every check and must stay callable for the object's lifetime.
// `installation_id` (this runtime folder's owner id) picks the engine key.
// Executor: every call is a coroutine on the executor given at construction (the daemon's
// io_context); waits poll with a steady_timer and never block it. start() and stop() are
// serialized: one arriving while another runs fails with "engine_busy".
// Timeouts: ready within 20 s of spawning; each ping, info and image inspect 2 s; stop waits
// 15 s after SIGTERM, then SIGKILLs and waits 5 s more.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/server/services.hpp"
#include "daemon/vm/engine_checks.hpp"
#include "daemon/vm/engine_process.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pybox::engine {
class EngineClient;
}

namespace pybox::vm {

namespace net = boost::asio;
namespace json = boost::json;

// An image recorded in images.json that the engine must hold.
struct RecordedImage {
    std::string name;      // e.g. "stdlib"
    std::string image_id;  // "sha256:..."
};
// Reads the recorded images (the image registry provides it); an Error fails the "images" check.
using RecordedImagesSource = std::function<Expected<std::vector<RecordedImage>>()>;

class PrivateEngine final : public daemon::EngineControl {
public:
    PrivateEngine(net::any_io_executor executor, engine::EngineClient& client, RuntimePaths paths,
                  std::string_view installation_id, config::DaemonConfig config, RecordedImagesSource recorded_images);
    PrivateEngine(const PrivateEngine&) = delete;
    PrivateEngine& operator=(const PrivateEngine&) = delete;

    net::awaitable<Expected<proto::EngineStartAnswer>> start() override;
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override;
    net::awaitable<proto::EngineStatus> status() override;

private:
    struct Verification {
        bool answered = false;  // /_ping succeeded
        std::string api_version;
        std::vector<CheckProblem> problems;
        std::vector<std::string> notes;
    };

    bool is_private() const { return !m_config.engine_socket.has_value(); }
    std::optional<int> running_dockerd() const;
    net::awaitable<Verification> verify(std::optional<int> dockerd_pid);
    std::optional<CheckProblem> check_own_command_line(int dockerd_pid) const;
    net::awaitable<void> check_images(Verification& verification);
    net::awaitable<Expected<int>> launch(std::vector<std::string>& notes);
    net::awaitable<bool> terminate(int pid, std::chrono::milliseconds grace);
    net::awaitable<std::vector<std::string>> clean_stale_state();
    proto::EngineStatus describe(const Verification& verification, std::optional<int> pid) const;
    Error needs_root_error() const;

    net::any_io_executor m_executor;
    RuntimePaths m_paths;
    config::DaemonConfig m_config;
    EngineLayout m_layout;
    std::filesystem::path m_socket;
    RecordedImagesSource m_recorded_images;
    engine::EngineClient& m_client;
    bool m_busy = false;
};

}  // namespace pybox::vm
