#include "daemon/vm/private_engine.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/limits.hpp"
#include "common/posix.hpp"
#include "common/process.hpp"
#include "common/scoped_flag.hpp"
#include "common/trusted_binary.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/vm/engine_binaries.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <csignal>
#include <system_error>

namespace pybox::vm {

using namespace std::chrono_literals;

namespace {

constexpr std::chrono::milliseconds k_ready_timeout = 20s;
constexpr std::chrono::milliseconds k_ready_ping_timeout = 500ms;
constexpr std::chrono::milliseconds k_poll_interval = 100ms;
constexpr std::chrono::milliseconds k_stop_grace = 15s;
constexpr std::chrono::milliseconds k_containerd_grace = 5s;
constexpr std::chrono::milliseconds k_kill_wait = 5s;
constexpr std::chrono::milliseconds k_unmount_wait = 3s;
constexpr std::size_t k_max_log_read = 1 << 20;
constexpr std::string_view k_no_images_note = "no images built yet: run `pybox setup`";

// Polls `done` every k_poll_interval until it holds or `limit` passes; never blocks the loop.
template <class Predicate>
net::awaitable<bool> poll_until(Predicate done, std::chrono::milliseconds limit)
{
    net::steady_timer timer(co_await net::this_coro::executor);
    const auto deadline = MonoClock::now() + limit;
    while (!done()) {
        if (MonoClock::now() >= deadline) co_return false;
        timer.expires_after(k_poll_interval);
        co_await timer.async_wait(net::use_awaitable);
    }
    co_return true;
}

bool process_matches(int pid, const std::function<bool(const std::vector<std::string>&)>& matches)
{
    if (!process_alive(pid)) return false;  // also reaps it when it is our exited child
    const auto argv = process_cmdline(pid);
    return argv && matches(*argv);
}

// The last few lines dockerd logged, for a start that failed.
std::string log_tail(const std::filesystem::path& log)
{
    const auto text = read_file_capped(log, k_max_log_read);
    if (!text) return {};
    std::vector<std::string_view> lines;
    std::string_view rest = *text;
    while (!rest.empty()) {
        const auto end = rest.find('\n');
        const auto line = rest.substr(0, end);
        if (!line.empty()) lines.push_back(line.substr(0, 300));
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    }
    std::string tail;
    for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i)
        tail += "\n  " + std::string(lines[i]);
    return tail;
}

std::string join_problems(const std::vector<CheckProblem>& problems)
{
    std::string text;
    for (const auto& problem : problems) text += "\n  " + problem.check + ": " + problem.message;
    return text;
}

Error busy_error()
{
    return make_error(api_error::k_engine_busy, "Another `pybox vm start` or `stop` is in progress.");
}

std::string without_period(std::string text)
{
    if (text.ends_with('.')) text.pop_back();
    return text;
}

void remove_quietly(const std::filesystem::path& file)
{
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
}

// dockerd reports its data-root with symlinks resolved.
std::filesystem::path resolved(const std::filesystem::path& dir)
{
    std::error_code ec;
    auto real = std::filesystem::weakly_canonical(dir, ec);
    return ec ? dir : real;
}

}  // namespace

PrivateEngine::PrivateEngine(net::any_io_executor executor, engine::EngineClient& client, RuntimePaths paths,
                             std::string_view installation_id, config::DaemonConfig config,
                             RecordedImagesSource recorded_images)
    : m_executor(std::move(executor)),
      m_paths(std::move(paths)),
      m_config(std::move(config)),
      m_layout(m_paths, installation_id),
      m_socket(config::engine_socket_path(m_config, m_paths)),
      m_recorded_images(std::move(recorded_images)),
      m_client(client)
{
}

net::awaitable<Expected<proto::EngineStartAnswer>> PrivateEngine::start()
{
    if (m_busy) co_return busy_error();
    const ScopedFlag busy(m_busy);
    const auto begun = MonoClock::now();

    if (!is_private()) {
        auto verification = co_await verify(std::nullopt);
        if (!verification.answered)
            co_return make_error(api_error::k_engine_unreachable, without_period(verification.problems.front().message) +
                                                           " (it is named by \"engine_socket\" in " +
                                                           m_paths.config_file().string() + ").");
        if (!verification.problems.empty())
            co_return make_error(api_error::k_engine_check_failed, "The engine at " + m_socket.string() +
                                                            " failed PyBox's checks (it is not PyBox's to stop, so "
                                                            "it was left running):" +
                                                            join_problems(verification.problems));
        co_return proto::EngineStartAnswer{describe(verification, std::nullopt), false,
                                           seconds_between(begun, MonoClock::now())};
    }

    if (current_uid() != 0) co_return needs_root_error();
    std::error_code ec;
    if (!std::filesystem::exists(m_config.dockerd, ec))
        co_return make_error(api_error::k_engine_start_failed,
                             m_config.dockerd.string() + " does not exist: install Debian's docker.io "
                                                         "(apt-get install docker.io) or set \"dockerd\" in " +
                                 m_paths.config_file().string() + ".");
    if (auto trusted = check_engine_binaries(m_config.dockerd, real_file_facts()); !trusted) co_return trusted.error();
    for (const auto& socket : m_layout.stale_sockets)
        if (socket.string().size() > k_max_unix_socket_path)
            co_return make_error(api_error::k_engine_start_failed,
                                 "The engine socket path " + socket.string() + " is longer than " +
                                     std::to_string(k_max_unix_socket_path) +
                                     " bytes, which unix sockets cannot hold: move the runtime folder "
                                     "(PYBOX_HOME) somewhere shorter.");
    if (auto made = m_paths.ensure_private(); !made) co_return made.error();
    for (const auto& dir : {std::filesystem::path(k_engine_state_base), m_layout.state_dir})
        if (auto made = ensure_private_dir(dir); !made) co_return made.error();

    std::vector<std::string> notes;
    bool started = false;
    auto pid = running_dockerd();
    if (!pid) {
        auto launched = co_await launch(notes);
        if (!launched) co_return launched.error();
        pid = *launched;
        started = true;
    }

    auto verification = co_await verify(pid);
    // A recorded image the engine lost is no fault of the engine: it stays up (unverified) so
    // that `pybox setup` can rebuild the image. Any other failed check stops it again.
    const bool only_images = std::all_of(verification.problems.begin(), verification.problems.end(),
                                         [](const CheckProblem& problem) { return problem.check == "images"; });
    if (!verification.problems.empty() && !only_images) {
        co_await terminate(*pid, k_stop_grace);
        co_await clean_stale_state();
        co_return make_error(api_error::k_engine_check_failed, "The private engine failed PyBox's checks and was stopped:" +
                                                        join_problems(verification.problems));
    }
    verification.notes.insert(verification.notes.begin(), notes.begin(), notes.end());
    co_return proto::EngineStartAnswer{describe(verification, pid), started, seconds_between(begun, MonoClock::now())};
}

net::awaitable<Expected<proto::EngineStopAnswer>> PrivateEngine::stop()
{
    if (!is_private())
        co_return make_error(api_error::k_engine_not_managed, "PyBox does not manage the engine at " + m_socket.string() +
                                                       "; stop it the way it was started.");
    if (m_busy) co_return busy_error();
    const ScopedFlag busy(m_busy);
    const auto begun = MonoClock::now();

    const auto pid = running_dockerd();
    bool forced = false;
    if (pid) {
        forced = !co_await terminate(*pid, k_stop_grace);
        if (process_matches(*pid, [&](const auto& argv) { return is_dockerd_of(argv, m_layout.data_root); }))
            co_return make_error(api_error::k_engine_stop_failed, "dockerd (pid " + std::to_string(*pid) +
                                                           ") is still running after SIGTERM and SIGKILL.");
    }
    auto notes = co_await clean_stale_state();
    if (!pid) notes.insert(notes.begin(), "the private engine was not running");
    co_return proto::EngineStopAnswer{false, pid.has_value(), forced, m_socket.string(),
                                      seconds_between(begun, MonoClock::now()), std::move(notes)};
}

net::awaitable<proto::EngineStatus> PrivateEngine::status()
{
    if (is_private()) {
        const auto pid = running_dockerd();
        if (!pid) {
            Verification stopped;
            stopped.problems.push_back({"running", current_uid() == 0
                                                       ? "The private engine is not running: `pybox vm start` starts it."
                                                       : needs_root_error().message});
            co_return describe(stopped, std::nullopt);
        }
        co_return describe(co_await verify(pid), pid);
    }
    co_return describe(co_await verify(std::nullopt), std::nullopt);
}

std::optional<int> PrivateEngine::running_dockerd() const
{
    const auto pid = read_pid_file(m_layout.pid_file);
    if (pid && process_matches(*pid, [&](const auto& argv) { return is_dockerd_of(argv, m_layout.data_root); }))
        return pid;
    return std::nullopt;
}

net::awaitable<PrivateEngine::Verification> PrivateEngine::verify(std::optional<int> dockerd_pid)
{
    Verification verification;
    const auto ping = co_await m_client.ping(limits::k_query_timeout);
    if (!ping) {
        verification.problems.push_back({"ping", "The engine at " + m_socket.string() +
                                                     " does not answer: " + without_period(ping.error().message) + "."});
        co_return verification;
    }
    verification.answered = true;
    verification.api_version = ping->api_version;
    if (auto problem = check_api_version(ping->api_version)) verification.problems.push_back(*problem);

    const auto info = co_await m_client.info(limits::k_query_timeout);
    if (!info) {
        verification.problems.push_back({"info", "GET /info failed: " + info.error().message});
    } else {
        const EngineExpectations expected{is_private(), resolved(m_layout.data_root), m_config.runtime};
        for (auto& problem : check_info(*info, expected)) verification.problems.push_back(std::move(problem));
    }

    if (dockerd_pid) {
        if (auto problem = check_own_command_line(*dockerd_pid)) verification.problems.push_back(*problem);
    } else {
        verification.notes.push_back("PyBox cannot verify from the Engine API that the engine at " +
                                     m_socket.string() + " has no TCP listener; make sure it listens on unix "
                                                         "sockets only.");
    }
    co_await check_images(verification);
    co_return verification;
}

std::optional<CheckProblem> PrivateEngine::check_own_command_line(int dockerd_pid) const
{
    const auto argv = process_cmdline(dockerd_pid);
    if (!argv) return CheckProblem{"listeners", "Cannot read the command line of dockerd (pid " +
                                                    std::to_string(dockerd_pid) + ")."};
    if (auto problem = check_listeners(*argv, m_layout.socket, m_layout.config_file)) return problem;
    // --config-file is read at start and on SIGHUP: it must still be the empty object we wrote.
    const auto text = read_file_capped(m_layout.config_file, 4096);
    boost::system::error_code ec;
    const auto parsed = text ? json::parse(*text, ec) : json::value();
    if (!text || ec || !parsed.is_object() || !parsed.get_object().empty())
        return CheckProblem{"listeners", m_layout.config_file.string() +
                                             " is no longer the empty object PyBox wrote, so it could add "
                                             "listeners: run `pybox vm stop` and `pybox vm start`."};
    return std::nullopt;
}

net::awaitable<void> PrivateEngine::check_images(Verification& verification)
{
    auto images = m_recorded_images();
    if (!images) {
        verification.problems.push_back({"images", "Cannot read the recorded images: " + images.error().message});
        co_return;
    }
    if (images->empty()) {
        verification.notes.emplace_back(k_no_images_note);
        co_return;
    }
    for (const auto& image : *images) {
        const auto inspected = co_await m_client.inspect_image(image.image_id, limits::k_inspect_timeout);
        if (!inspected) {
            verification.problems.push_back(
                {"images", inspected.error().code == api_error::k_engine_no_such_object
                               ? "Image " + image.name + " (" + image.image_id +
                                     ") is recorded in images.json but the engine does not hold it."
                               : "Cannot inspect image " + image.name + " (" + image.image_id +
                                     "): " + inspected.error().message});
            continue;
        }
        if (inspected->id != image.image_id)
            verification.problems.push_back({"images", "The engine's image for " + image.name +
                                                            " does not have the recorded ID " + image.image_id + "."});
    }
}

net::awaitable<Expected<int>> PrivateEngine::launch(std::vector<std::string>& notes)
{
    // An engine answering on our socket without our pid file naming it is not ours to replace.
    if (auto answer = co_await m_client.ping(k_ready_ping_timeout); answer)
        co_return make_error(api_error::k_engine_start_failed,
                             "An engine already answers on " + m_socket.string() + " but " +
                                 m_layout.pid_file.string() + " does not name it: stop that engine first.");
    notes = co_await clean_stale_state();

    if (auto written = write_file_atomic(m_layout.config_file, "{}\n"); !written) co_return written.error();
    std::error_code ec;
    if (std::filesystem::exists(m_layout.log_file, ec))
        std::filesystem::rename(m_layout.log_file, m_layout.log_file.string() + ".1", ec);

    auto spawned = spawn_detached(dockerd_arguments(m_config, m_layout), m_layout.log_file,
                                  {{"PATH", engine_path_variable()}});
    if (!spawned) co_return make_error(api_error::k_engine_start_failed, spawned.error().message);
    const int pid = *spawned;

    net::steady_timer timer(m_executor);
    const auto deadline = MonoClock::now() + k_ready_timeout;
    while (true) {
        if (!process_alive(pid))
            co_return make_error(api_error::k_engine_start_failed, "dockerd exited during start-up; its last words (" +
                                                            m_layout.log_file.string() + "):" +
                                                            log_tail(m_layout.log_file));
        if (auto answer = co_await m_client.ping(k_ready_ping_timeout); answer) co_return pid;
        if (MonoClock::now() >= deadline) break;
        timer.expires_after(k_poll_interval);
        co_await timer.async_wait(net::use_awaitable);
    }
    co_await terminate(pid, k_kill_wait);
    co_await clean_stale_state();
    co_return make_error(api_error::k_engine_start_failed,
                         "dockerd did not answer on " + m_socket.string() + " within " +
                             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(k_ready_timeout).count()) +
                             " s and was stopped; see " + m_layout.log_file.string() + ":" +
                             log_tail(m_layout.log_file));
}

// SIGTERM, wait `grace`, then SIGKILL. True when it ended without SIGKILL.
net::awaitable<bool> PrivateEngine::terminate(int pid, std::chrono::milliseconds grace)
{
    const auto gone = [&] {
        return !process_matches(pid, [&](const auto& argv) { return is_dockerd_of(argv, m_layout.data_root); });
    };
    send_signal(pid, SIGTERM);
    if (co_await poll_until(gone, grace)) co_return true;
    send_signal(pid, SIGKILL);
    co_await poll_until(gone, k_kill_wait);
    co_return false;
}

// Call only when no dockerd of ours runs. Returns what it found and did, as notes.
net::awaitable<std::vector<std::string>> PrivateEngine::clean_stale_state()
{
    std::vector<std::string> notes;
    std::error_code ec;
    if (std::filesystem::exists(m_layout.pid_file, ec)) {
        remove_quietly(m_layout.pid_file);
        notes.push_back("removed the stale pid file of an engine that is gone");
    }

    if (const auto pid = read_pid_file(m_layout.containerd_pid_file)) {
        const auto ours = [&] {
            return process_matches(*pid, [&](const auto& argv) {
                return is_containerd_of(argv, m_layout.containerd_config);
            });
        };
        if (ours()) {
            send_signal(*pid, SIGTERM);
            if (!co_await poll_until([&] { return !ours(); }, k_containerd_grace)) {
                send_signal(*pid, SIGKILL);
                co_await poll_until([&] { return !ours(); }, k_kill_wait);
            }
            notes.push_back("stopped the leftover containerd (pid " + std::to_string(*pid) + ") of a dead engine");
        }
    }
    remove_quietly(m_layout.containerd_pid_file);

    bool removed_socket = false;
    for (const auto& socket : m_layout.stale_sockets)
        removed_socket = std::filesystem::remove(socket, ec) || removed_socket;
    if (removed_socket) notes.push_back("removed stale engine sockets");

    // dockerd bind-mounts its data-root over itself and undoes it only on a clean stop.
    if (is_mounted(m_layout.data_root)) {
        const auto umount = find_executable("umount", {"/usr/bin", "/bin"});
        bool unmounted = false;
        if (umount && spawn_detached({umount->string(), m_layout.data_root.string()}, m_layout.log_file))
            unmounted = co_await poll_until([&] { return !is_mounted(m_layout.data_root); }, k_unmount_wait);
        notes.push_back(unmounted ? "unmounted the data-root mount a killed engine left behind"
                                  : "could not unmount " + m_layout.data_root.string() +
                                        " (a killed engine's mount; see " + m_layout.log_file.string() + ")");
    }
    co_return notes;
}

proto::EngineStatus PrivateEngine::describe(const Verification& verification, std::optional<int> pid) const
{
    proto::EngineStatus status;
    status.running = is_private() ? pid.has_value() : verification.answered;
    status.verified = status.running && verification.answered && verification.problems.empty();
    status.engine_socket = m_socket.string();
    status.is_private = is_private();
    status.runtime = m_config.runtime;
    for (const auto& problem : verification.problems) status.problems.push_back({problem.check, problem.message});
    status.notes = verification.notes;
    status.pid = pid;
    if (!verification.api_version.empty()) status.api_version = verification.api_version;
    return status;
}

Error PrivateEngine::needs_root_error() const
{
    const auto rootless = find_executable("dockerd-rootless.sh",
                                          {"/usr/bin", "/usr/local/bin", "/usr/share/docker.io/contrib"});
    const auto config = m_paths.config_file().string();
    std::string message = "A private engine needs root on Linux, and pyboxd runs as uid " +
                          std::to_string(current_uid()) +
                          ". Either point PyBox at an engine you may use by writing "
                          "{\"engine_socket\": \"/path/to/docker.sock\"} to " +
                          config + ", or run rootless dockerd";
    message += rootless ? " (installed: " + rootless->string() + ", it needs the rootlesskit package)"
                        : " (install rootless Docker first)";
    message += " and name its socket, usually $XDG_RUNTIME_DIR/docker.sock, there.";
    return make_error(api_error::k_private_engine_needs_root, message);
}

}  // namespace pybox::vm
