#include "tests/integration/harness.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/unfinished_command.hpp"

#include "common/files.hpp"
#include "common/limits.hpp"
#include "util/text.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <thread>
#include <utility>

namespace pybox::test {

namespace json = boost::json;

std::filesystem::path runtime_home()
{
    const char* home = std::getenv("PYBOX_HOME");
    REQUIRE(home != nullptr);
    return home;
}

namespace {

std::filesystem::path engine_socket() { return runtime_home() / "engine" / "docker.sock"; }
std::string engine_host() { return "unix://" + engine_socket().string(); }

}  // namespace

std::chrono::milliseconds pybox_time_limit(const std::vector<std::string>& args)
{
    const auto is = [&](std::initializer_list<const char*> words) {
        return args.size() >= words.size() && std::equal(words.begin(), words.end(), args.begin());
    };
    // They build images with mmdebstrap or copy them between engines: minutes on a busy machine.
    if (is({"image", "build"}) || is({"setup"}) || is({"vm", "start"})) return std::chrono::minutes(10);
    return std::chrono::minutes(2);
}

Expected<ProcessResult> try_run_pybox(const std::vector<std::string>& args, const std::string& input,
                                      const std::vector<std::pair<std::string, std::string>>& env)
{
    std::vector<std::string> argv{pybox::test::client_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options;
    options.input = input;
    options.separate_stderr = true;
    options.timeout = pybox_time_limit(args);
    options.max_output = 8 << 20;
    for (const auto& [name, value] : env) options.env[name] = value;
    return run_process(argv, options);
}

ProcessResult finished(const std::vector<std::string>& args, const Expected<ProcessResult>& result)
{
    std::vector<std::string> argv{"pybox"};
    argv.insert(argv.end(), args.begin(), args.end());
    return finished_within(argv, pybox_time_limit(args), result);
}

ProcessResult run_pybox(const std::vector<std::string>& args, const std::string& input,
                        const std::vector<std::pair<std::string, std::string>>& env)
{
    return finished(args, try_run_pybox(args, input, env));
}

json::value answer_of(const ProcessResult& process)
{
    INFO("stdout: " << process.output << "\nstderr: " << process.error_output);
    boost::system::error_code ec;
    auto document = json::parse(process.output, ec);
    REQUIRE_FALSE(ec);
    return document;
}

JsonRun run_json(const std::string& program, const std::vector<std::string>& extra,
                 const std::vector<std::pair<std::string, std::string>>& env)
{
    std::vector<std::string> args{"exec", "-", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    JsonRun run{run_pybox(args, program, env), nullptr};
    INFO("stderr: " << run.process.error_output);
    boost::system::error_code ec;
    run.receipt = json::parse(run.process.output, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(run.receipt.is_object());
    return run;
}

std::string captured(const json::value& receipt, const std::string& stream)
{
    const auto& capture = receipt.at("capture");
    const std::string text(capture.at(stream).as_string());
    if (capture.at(stream + "_encoding") == "utf-8") return text;
    REQUIRE(capture.at(stream + "_encoding") == "base64");
    auto bytes = util::base64_decode(text);
    REQUIRE(bytes.has_value());
    return *bytes;
}

json::value program_json(const JsonRun& run)
{
    const auto text = captured(run.receipt, "stdout");
    INFO("program stdout: " << text);
    INFO("program stderr: " << captured(run.receipt, "stderr"));
    boost::system::error_code ec;
    auto parsed = json::parse(text, ec);
    REQUIRE_FALSE(ec);
    return parsed;
}

namespace {

std::string owner_of(const std::filesystem::path& home)
{
    auto installation = read_file_capped(home / "installation.json", 4096);
    REQUIRE(installation.has_value());
    return std::string(json::parse(*installation).at("installation_id").as_string());
}

// IDs of the boxes on the engine at `socket` with `owner`'s label (`docker ps` with `filters`).
std::vector<std::string> boxes_with_owner(const std::filesystem::path& socket, const std::string& owner,
                                          const std::vector<std::string>& filters = {"--all"})
{
    std::vector<std::string> argv{"/usr/bin/docker", "-H", "unix://" + socket.string(), "ps", "--quiet", "--no-trunc",
                                  "--filter", "label=pybox.owner=" + owner};
    argv.insert(argv.end(), filters.begin(), filters.end());
    auto listed = run_process(argv);
    REQUIRE(listed.has_value());
    REQUIRE(listed->exit_code == 0);
    std::vector<std::string> ids;
    std::istringstream lines(listed->output);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) ids.push_back(line);
    return ids;
}

bool daemon_running(const std::filesystem::path& home)
{
    auto text = read_file_capped(home / "pyboxd.pid", 64);
    if (!text) return false;
    const int pid = std::atoi(text->c_str());
    return pid > 0 && process_alive(pid);
}

// The warm entries of one `pybox attempts --json` of the daemon of `home`, or nullopt when it
// did not answer; `creating` tells whether one of them has no container ID yet.
std::optional<std::vector<WarmBox>> read_warm_boxes(const std::filesystem::path& home, bool& creating,
                                                    std::string& failure)
{
    auto listed = try_run_pybox({"attempts", "--json"}, "", {{"PYBOX_HOME", home.string()}});
    if (!listed || listed->exit_code != 0) {
        failure = listed ? listed->error_output : listed.error().message;
        return std::nullopt;
    }
    std::vector<WarmBox> warm;
    creating = false;
    const auto answer = json::parse(listed->output);
    for (const auto& entry : answer.at("unsettled").as_array()) {
        if (entry.at("in_progress") != true || entry.at("warm") != true) continue;
        const std::string id(entry.at("container_id").as_string());
        if (id.empty()) creating = true;
        warm.push_back({std::string(entry.at("run_id").as_string()), id});
    }
    return warm;
}

}  // namespace

std::vector<WarmBox> warm_boxes(const std::filesystem::path& home)
{
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::string failure;
    for (;;) {
        bool creating = false;
        auto warm = read_warm_boxes(home, creating, failure);
        if (!warm && !daemon_running(home)) return {};
        if (warm && (!creating || std::chrono::steady_clock::now() > give_up)) return *warm;
        if (std::chrono::steady_clock::now() > give_up) FAIL("pybox attempts --json failed: " << failure);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

Expected<ProcessResult> docker(std::vector<std::string> args, ProcessOptions options)
{
    args.insert(args.begin(), {"/usr/bin/docker", "-H", engine_host()});
    options.separate_stderr = true;
    return run_process(args, options);
}

std::string daemonizing_child_program(const std::string& marker)
{
    return R"PY(
import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, '-c',
                 'import signal, time\nfor s in (1, 2, 15): signal.signal(s, signal.SIG_IGN)\ntime.sleep(60)',
                 ')PY" + marker + R"PY('])
    os._exit(0)
os.wait()
time.sleep(0.3)
alive = [p for p in os.listdir('/proc') if p.isdigit() and ')PY" + marker + R"PY(' in open('/proc/%s/cmdline' % p).read()]
print('daemon running' if alive else 'daemon missing', flush=True)
)PY";
}

std::size_t processes_with_argument(const std::string& marker)
{
    std::size_t found = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        auto cmdline = read_file_capped(entry.path() / "cmdline", 1 << 20);
        if (cmdline && cmdline->find(marker) != std::string::npos) ++found;
    }
    return found;
}

std::string fork_bomb_program(int forks)
{
    return "import os, time\n"
           "made = 0\n"
           "for _ in range(" + std::to_string(forks) + "):\n"
           "    try:\n"
           "        if os.fork() == 0:\n"
           "            time.sleep(1)\n"
           "            os._exit(0)\n"
           "        made += 1\n"
           "    except OSError:\n"
           "        pass\n"
           "print(made, flush=True)\n"
           "for _ in range(made):\n"
           "    os.wait()\n";
}

std::string docker_ok(const std::vector<std::string>& args)
{
    std::vector<std::string> argv{"docker"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = finished_within(argv, ProcessOptions{}.timeout, docker(args));
    INFO(result.output << result.error_output);
    REQUIRE(result.exit_code == 0);
    return result.output.substr(0, result.output.find('\n'));
}

bool box_exists(const std::string& id)
{
    const auto inspected = docker({"inspect", "--format", "{{.Id}}", id});
    REQUIRE(inspected.has_value());
    return inspected->exit_code == 0;
}

std::vector<std::string> labelled_boxes(const std::filesystem::path& home)
{
    return labelled_boxes_on(engine_socket(), home);
}

std::vector<std::string> labelled_boxes_on(const std::filesystem::path& socket, const std::filesystem::path& home)
{
    const std::string owner = owner_of(home);
    auto warm = warm_boxes(home);
    const auto listed = boxes_with_owner(socket, owner);
    const auto after = warm_boxes(home);  // a box made warm while the engine listed
    warm.insert(warm.end(), after.begin(), after.end());
    std::vector<std::string> left;
    for (const auto& id : listed)
        if (std::none_of(warm.begin(), warm.end(), [&](const WarmBox& box) { return box.container_id == id; }))
            left.push_back(id);
    // What each box left is, for the check that follows.
    for (const auto& id : left) {
        auto state = run_process({"/usr/bin/docker", "-H", "unix://" + socket.string(), "inspect", "--format",
                                  "{{.State.Status}} since {{.Created}}, run {{index .Config.Labels \"pybox.run\"}}", id});
        UNSCOPED_INFO("box left: " << id.substr(0, 12) << " " << (state ? state->output : state.error().message));
    }
    return left;
}

int configured_warm_boxes(const std::filesystem::path& home)
{
    auto text = read_file_capped(home / "config.json", 1 << 20);
    REQUIRE(text.has_value());
    const auto config = json::parse(*text).as_object();
    const auto number = [&](const char* key, std::int64_t fallback) {
        const auto* value = config.if_contains(key);
        return value != nullptr ? value->as_int64() : fallback;
    };
    if (number("box_expiry_s", limits::k_box_expiry_s) <
        limits::k_warm_box_renewed_before_expiry_s + limits::k_min_warm_box_wait_s)
        return 0;
    const auto* engines = config.if_contains("engines");
    const auto* local = config.if_contains("local_engine");
    const auto engines_taking_runs = (engines != nullptr ? engines->as_array().size() : 0) +
                                     (local == nullptr || local->as_bool() ? 1 : 0);
    return static_cast<int>(number("warm_boxes", limits::k_default_warm_boxes)) *
           static_cast<int>(engines_taking_runs);
}

bool warm_boxes_settled(std::chrono::seconds limit, const std::filesystem::path& home)
{
    const auto wanted = static_cast<std::size_t>(configured_warm_boxes(home));
    const std::string owner = owner_of(home);
    return within(limit, [&] {
        const auto warm = warm_boxes(home);
        if (warm.size() != wanted) return false;
        const auto running = boxes_with_owner(engine_socket(), owner, {"--filter", "status=running"});
        return std::all_of(warm.begin(), warm.end(), [&](const WarmBox& box) {
            return std::find(running.begin(), running.end(), box.container_id) != running.end();
        });
    });
}

std::filesystem::path make_side_home(const std::string& name, json::object config,
                                     const std::function<void(const std::filesystem::path&)>& prepare_home)
{
    namespace fs = std::filesystem;
    const fs::path home = runtime_home().string() + "-" + name;
    fs::remove_all(home);
    fs::create_directories(home);
    if (prepare_home) prepare_home(home);
    fs::permissions(home, fs::perms::owner_all);
    for (const char* record : {"images.json", "images.lock"})
        fs::copy_file(runtime_home() / record, home / record);
    fs::copy(runtime_home() / "recipes", home / "recipes", fs::copy_options::recursive);
    config["engine_socket"] = engine_socket().string();
    REQUIRE(write_file_atomic(home / "config.json", json::serialize(config)).has_value());
    return home;
}

SideDaemon::SideDaemon(const std::string& name, json::object config,
                       const std::function<void(const std::filesystem::path&)>& prepare_home, SideDaemonStart how)
    : m_home(make_side_home(name, std::move(config), prepare_home)), m_how(std::move(how))
{
    start();
}

void SideDaemon::start()
{
    namespace fs = std::filesystem;
    fs::remove(socket());  // a killed daemon's; waiting for the new one needs it gone
    std::vector<std::string> argv{"/usr/bin/env", "PYBOX_HOME=" + m_home.string()};
    if (m_how.socket) argv.push_back("PYBOX_SYSTEM_SOCKET=" + m_how.socket->string());
    argv.emplace_back(pybox::test::daemon_path());
    argv.insert(argv.end(), m_how.args.begin(), m_how.args.end());
    auto daemon = spawn_detached(argv, m_home / "pyboxd.log");
    REQUIRE(daemon.has_value());
    m_pid = *daemon;
    for (int i = 0; i < 100 && !fs::exists(socket()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(fs::exists(socket()));
}

SideDaemon::~SideDaemon()
{
    send_signal(m_pid, k_signal_terminate);
    for (int i = 0; i < 200 && process_alive(m_pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void SideDaemon::kill_hard()
{
    REQUIRE(send_signal(m_pid, k_signal_kill));
    // Ended, and no thread of it left: a killed process's leader is a zombie while its other
    // threads still exit, and they hold its files (the runtime folder's lock among them) until
    // the last one has.
    const auto threads = std::filesystem::path("/proc") / std::to_string(m_pid) / "task";
    const auto gone = [&] {
        if (process_alive(m_pid)) return false;
        std::error_code ended;
        auto listed = std::filesystem::directory_iterator(threads, ended);
        return ended || std::distance(listed, std::filesystem::directory_iterator()) <= 1;
    };
    for (int i = 0; i < 200 && !gone(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    REQUIRE(gone());
}

void SideDaemon::restart() { start(); }

JsonRun SideDaemon::run_json(const std::string& program, const std::vector<std::string>& extra) const
{
    return test::run_json(program, extra, {{"PYBOX_HOME", m_home.string()}});
}

Expected<ProcessResult> SideDaemon::try_pybox(const std::vector<std::string>& args, const std::string& input) const
{
    return try_run_pybox(args, input, {{"PYBOX_HOME", m_home.string()}});
}

ProcessResult SideDaemon::pybox(const std::vector<std::string>& args, const std::string& input) const
{
    return finished(args, try_pybox(args, input));
}

std::vector<json::object> engine_events(const std::string& container_id, std::int64_t since, std::int64_t until)
{
    auto listed = run_process({"/usr/bin/docker", "-H", engine_host(), "events", "--since", std::to_string(since),
                               "--until", std::to_string(until), "--filter", "container=" + container_id,
                               "--format", "{{json .}}"});
    REQUIRE(listed.has_value());
    REQUIRE(listed->exit_code == 0);
    std::vector<json::object> events;
    std::istringstream lines(listed->output);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) events.push_back(json::parse(line).as_object());
    return events;
}

namespace {

// Waits up to 3 s for the daemon's fd count to equal `wanted` (or, without it, to hold still
// for 100 ms), and returns the last count seen.
std::size_t settled_daemon_fd_count(std::optional<std::size_t> wanted = std::nullopt)
{
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    auto count = daemon_fd_count();
    while (std::chrono::steady_clock::now() < give_up) {
        if (wanted && count == *wanted) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const auto previous = std::exchange(count, daemon_fd_count());
        if (!wanted && count == previous) break;
    }
    return count;
}

// The daemon's fd count once it has not changed for a second (waiting up to 10 s), or the last
// count seen.
std::size_t still_daemon_fd_count()
{
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto count = daemon_fd_count();
    auto since = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const auto now = std::chrono::steady_clock::now();
        const auto seen = daemon_fd_count();
        if (seen != count) {
            count = seen;
            since = now;
        } else if (now - since >= std::chrono::seconds(1)) {
            break;
        }
    }
    return count;
}

}  // namespace

void check_ended_clean()
{
    // Idle: the daemon holds its warm box, started (its attach and wait connections open), and
    // its fd count has held still. Taken by the first call that finds the warm boxes settled
    // (waiting up to a minute), not before: on a loaded machine the first case may end while a
    // warm box is still being made, and a count taken then would fail every later case.
    static std::optional<std::size_t> idle_fds;
    if (!idle_fds) {
        const bool settled = warm_boxes_settled(std::chrono::seconds(60));
        CHECK(settled);
        if (settled) idle_fds = still_daemon_fd_count();
    }
    CHECK(labelled_boxes().empty());
    const auto run = run_json("print('still serving')\n", {"--timeout", "5"});
    CHECK(run.process.exit_code == 0);
    CHECK(run.receipt.at("capture").at("stdout") == "still serving\n");
    CHECK(run.receipt.at("cleanup").at("status") == "REMOVED");
    CHECK(labelled_boxes().empty());
    CHECK(warm_boxes_settled());  // the next warm box, prepared after the run
    if (idle_fds) CHECK(settled_daemon_fd_count(*idle_fds) == *idle_fds);
}

int daemon_pid()
{
    auto text = read_file_capped(runtime_home() / "pyboxd.pid", 64);
    REQUIRE(text.has_value());
    const int pid = std::atoi(text->c_str());
    REQUIRE(pid > 0);
    return pid;
}

std::size_t daemon_fd_count()
{
    const auto fds = std::filesystem::path("/proc") / std::to_string(daemon_pid()) / "fd";
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(fds)) ++count;
    return count;
}

namespace {

// A line of /proc/<pid>/status in KiB ("VmRSS", "VmHWM"), or nullopt.
std::optional<std::size_t> status_kib(int pid, const std::string& name)
{
    auto status = read_file_capped(std::filesystem::path("/proc") / std::to_string(pid) / "status", 64 * 1024);
    if (!status) return std::nullopt;
    const auto at = status->find(name + ":");
    if (at == std::string::npos) return std::nullopt;
    return static_cast<std::size_t>(std::strtoull(status->c_str() + at + name.size() + 1, nullptr, 10));
}

}  // namespace

std::optional<std::size_t> try_rss_kib(int pid) { return status_kib(pid, "VmRSS"); }

std::size_t daemon_rss_kib()
{
    const auto kib = try_rss_kib(daemon_pid());
    REQUIRE(kib.has_value());
    return *kib;
}

void reset_daemon_peak_rss()
{
    std::ofstream clear_refs(std::filesystem::path("/proc") / std::to_string(daemon_pid()) / "clear_refs");
    clear_refs << "5\n";
    clear_refs.close();
    REQUIRE(clear_refs.good());
}

std::size_t daemon_peak_rss_kib()
{
    const auto kib = status_kib(daemon_pid(), "VmHWM");
    REQUIRE(kib.has_value());
    return *kib;
}

}  // namespace pybox::test
