// docs/hostile.md cases 30, 38, 39, 49-52 and 54: faults of the engine, the client and the host (a
// client of another uid, the engine killed, the client gone, a runtime folder that is full or
// read-only, a receipts folder that cannot be written, kept receipts tampered with), each caused
// for real and measured from outside the daemon (the engine's events, the host's /proc, the
// client's own clock, the files themselves).
//
// The engine cases kill the suite's own engine and start it again with `pybox vm start`: ctest
// runs this suite with RUN_SERIAL and Catch2 runs its cases one after another, so no other test
// uses the engine meanwhile, and each case ends with the engine verified again.
#include "tests/hostile/hostile.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/unfinished_command.hpp"

#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/limits.hpp"
#include "common/process.hpp"
#include "tests/hostile/raw_client.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

constexpr unsigned k_nobody = 65534;

double unix_now() { return static_cast<double>(unix_nanoseconds(WallClock::now())) / 1e9; }

double seconds_since(steady_clock::time_point start)
{
    return std::chrono::duration<double>(steady_clock::now() - start).count();
}

// Polls `done` every 20 ms for up to `limit`; true once it holds.
bool wait_until(const std::function<bool()>& done, milliseconds limit)
{
    const auto give_up = steady_clock::now() + limit;
    while (!done()) {
        if (steady_clock::now() >= give_up) return false;
        std::this_thread::sleep_for(milliseconds(20));
    }
    return true;
}

// The ID of the suite's one labelled box, once it exists.
std::string wait_for_box()
{
    std::vector<std::string> boxes;
    wait_until([&] { return !(boxes = labelled_boxes()).empty(); }, milliseconds(15'000));
    REQUIRE(boxes.size() == 1);
    return boxes.front();
}

// The live processes of the host that run in the box's cgroup: an observer independent of the
// engine, so it keeps working while the engine is down.
std::vector<int> box_processes(const std::string& container_id)
{
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto cgroups = read_file_capped(entry.path() / "cgroup", 64 * 1024);
        const int pid = std::atoi(name.c_str());
        if (cgroups && cgroups->find(container_id) != std::string::npos && process_alive(pid)) pids.push_back(pid);
    }
    return pids;
}

// When the engine reported the box destroyed (unix seconds, the engine's clock, which is this
// host's), looking from `since` on.
std::optional<double> destroyed_at(const std::string& container_id, double since)
{
    const auto from = static_cast<std::int64_t>(since) - 1;
    const auto to = static_cast<std::int64_t>(unix_now()) + 1;  // `docker events` waits until then
    for (const auto& event : engine_events(container_id, from, to))
        if (event.contains("Action") && event.at("Action") == "destroy")
            return static_cast<double>(event.at("timeNano").to_number<std::int64_t>()) / 1e9;
    return std::nullopt;
}

bool has_explanation(const json::value& receipt, std::string_view code)
{
    for (const auto& explanation : receipt.at("explanations").as_array())
        if (explanation.at("code").as_string() == code) return true;
    return false;
}

int engine_pid()
{
    const auto text = read_file_capped(runtime_home() / "engine" / "dockerd.pid", 64);
    REQUIRE(text.has_value());
    const int pid = std::atoi(text->c_str());
    REQUIRE(pid > 0);
    return pid;
}

// Starts the suite's engine again when it goes away, unless it already runs verified.
struct EngineRestarter {
    EngineRestarter() = default;
    EngineRestarter(const EngineRestarter&) = delete;
    EngineRestarter& operator=(const EngineRestarter&) = delete;
    ~EngineRestarter()
    {
        const auto status = try_run_pybox({"vm", "status"});
        if (!status || status->exit_code != 0) (void)try_run_pybox({"vm", "start"});
    }
};

// Something mounted on a folder for as long as this lives (declare it before a SideDaemon whose
// folder it is, so the daemon is stopped first).
class Mounted {
public:
    Mounted() = default;
    ~Mounted()
    {
        if (!m_dir.empty()) (void)run_process({"/usr/bin/umount", m_dir.string()});
    }
    Mounted(const Mounted&) = delete;
    Mounted& operator=(const Mounted&) = delete;

    // A tmpfs of `bytes`, 0700.
    void tmpfs(std::size_t bytes, const fs::path& dir)
    {
        mount({"-t", "tmpfs", "-o", "size=" + std::to_string(bytes) + ",mode=0700", "tmpfs"}, dir);
    }
    // The folder bound onto itself, read-only: files already open stay writable, nothing new can
    // be written through the path.
    void read_only(const fs::path& dir)
    {
        mount({"--bind", dir.string()}, dir);
        run_mount({"-o", "remount,bind,ro"}, dir);
    }

private:
    // `mount options... dir`, undone when this goes away.
    void mount(std::vector<std::string> options, const fs::path& dir)
    {
        run_mount(std::move(options), dir);
        m_dir = dir;
    }
    static void run_mount(std::vector<std::string> arguments, const fs::path& dir)
    {
        arguments.insert(arguments.begin(), "/usr/bin/mount");
        arguments.push_back(dir.string());
        const auto mounted = run_process(arguments);
        REQUIRE(mounted.has_value());
        INFO(mounted->output);
        REQUIRE(mounted->exit_code == 0);
    }

    fs::path m_dir;
};

// Releases whatever is mounted on `dir` (a failed earlier run of a test may have left it).
void unmount_all(const fs::path& dir)
{
    while (fs::exists(dir)) {
        const auto released = run_process({"/usr/bin/umount", dir.string()});
        if (!released || released->exit_code != 0) break;
    }
}

// The runtime folder SideDaemon(name) uses, with whatever a failed earlier run of this test left
// mounted on it released first (SideDaemon could not empty it otherwise).
fs::path side_home_unmounted(const std::string& name)
{
    const fs::path home = runtime_home().string() + "-" + name;
    unmount_all(home / "receipts");
    unmount_all(home);
    return home;
}

// Every file under `dir` with its size: what a failed request must leave exactly as it was.
// pyboxd.log is left out: it is the side daemon's stderr, which the harness opened before the
// folder was made read-only or full, and the daemon writes lines into it whenever they come (its
// first ping's "engine API" line may come after this test took its first look).
std::map<std::string, std::uintmax_t> files_under(const fs::path& dir)
{
    std::map<std::string, std::uintmax_t> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (entry.path() == dir / "pyboxd.log") continue;
        std::error_code ec;
        files[entry.path().string()] = entry.is_regular_file(ec) ? entry.file_size(ec) : 0;
    }
    return files;
}

// Fills the file system holding `dir` to the last byte.
void fill_up(const fs::path& dir)
{
    const auto filled = run_process({"/usr/bin/dd", "if=/dev/zero", "of=" + (dir / "filler").string(), "bs=4096"});
    REQUIRE(filled.has_value());
    INFO(filled->output);
    REQUIRE(filled->output.find("No space left on device") != std::string::npos);
}

// The runtime-folder cases are about a run's attempt note, written before its box is created:
// their daemons keep no warm box, whose note would have been written before the folder filled
// up or became read-only (a warm box's run then needs no new note; warm_test.cpp has that case).
const json::object k_runs_cold{{"warm_boxes", 0}};

// A run against a side daemon whose runtime folder cannot take the attempt note: refused with
// file_unwritable naming `why`, before any box exists, with nothing written in the folder; the
// daemon keeps answering.
void check_run_refused_unwritten(const SideDaemon& daemon, const std::string& why)
{
    const auto before = files_under(daemon.home());
    const auto reply = raw_exchange(daemon.home() / "pyboxd.sock", post_runs(R"J({"source": "print(1)\n"})J"),
                                    milliseconds(30'000));
    const auto answers = split_answers(reply.bytes);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == 500);
    CHECK(error_code(answers[0]) == "file_unwritable");
    CHECK_THAT(answers[0].body, Catch::Contains(why) && Catch::Contains("attempts"));

    const auto client = run_pybox({"exec", "-"}, "print(1)\n", {{"PYBOX_HOME", daemon.home().string()}});
    INFO("client stderr: " << client.error_output);
    CHECK(client.exit_code == 125);
    CHECK(client.output.empty());
    CHECK_THAT(client.error_output, Catch::Contains(why));

    CHECK(files_under(daemon.home()) == before);
    CHECK(labelled_boxes(daemon.home()).empty());
    check_ping_answers(daemon.home() / "pyboxd.sock");
}

// A run whose engine was SIGKILLed while its program ran, as the client saw it.
struct LostRun {
    std::string box;                // container ID
    double program_started = 0;     // unix seconds, as the program printed it
    double answered_after = 0;      // from the engine's death to the client's receipt
    std::string stderr_text;        // what the program wrote to stderr before the engine died
};

// A program that never ends by itself; it prints "started <unix time>" first.
constexpr const char* k_endless_program =
    "import time\nprint('started', time.time())\nwhile True:\n    time.sleep(0.05)\n";

// Starts `program` (which must print "started <unix time>" first on stdout, then never end by
// itself) with the deadline `timeout_s`, SIGKILLs the suite's engine once the program runs,
// and checks the receipt the client gets: the engine went away, the end was not observed, the
// output is incomplete and the removal unconfirmed.
LostRun run_and_kill_engine(double timeout_s, const std::string& program = k_endless_program)
{
    REQUIRE(labelled_boxes().empty());
    Expected<ProcessResult> result = make_error("not_run", "not run");
    std::jthread client([&result, &program, timeout_s] {
        result = try_run_pybox({"exec", "-", "--json", "--timeout", std::to_string(timeout_s)}, program);
    });
    LostRun lost;
    lost.box = wait_for_box();
    REQUIRE(wait_until([&] { return box_processes(lost.box).size() >= 2; }, milliseconds(5'000)));
    std::this_thread::sleep_for(milliseconds(500));

    REQUIRE(send_signal(engine_pid(), k_signal_kill));
    const auto engine_killed = steady_clock::now();
    client.join();
    lost.answered_after = seconds_since(engine_killed);
    REQUIRE(result.has_value());
    INFO("client stderr: " << result->error_output);
    INFO("receipt: " << result->output);
    const auto receipt = json::parse(result->output);
    CHECK(result->exit_code == 125);
    CHECK(mechanism(receipt) == "ENGINE_LOST");
    CHECK(has_explanation(receipt, "ENGINE_GONE"));
    CHECK(receipt.at("capture").at("output_complete") == false);
    CHECK(receipt.at("cleanup").at("status") == "REMOVAL_UNCONFIRMED");
    CHECK(receipt.at("unknown").at("exit_code") == true);
    CHECK(receipt.at("unknown_reasons").as_object().contains("exit_code"));
    CHECK(lost.answered_after < 2);
    // What the program wrote before the engine went away is in the receipt.
    const auto stdout_text = captured(receipt, "stdout");
    REQUIRE(stdout_text.rfind("started ", 0) == 0);
    lost.program_started = std::strtod(stdout_text.c_str() + 8, nullptr);
    lost.stderr_text = captured(receipt, "stderr");
    REQUIRE_FALSE(box_processes(lost.box).empty());  // the program outlived the engine
    return lost;
}

// `pybox vm start`: the engine is verified again. Returns how long it took.
double restart_engine()
{
    const auto restarted_at = steady_clock::now();
    const auto restarted = run_pybox({"vm", "start"});
    INFO("vm start: " << restarted.output << restarted.error_output);
    REQUIRE(restarted.exit_code == 0);
    return seconds_since(restarted_at);
}

// The next run succeeds, and the box the lost run left is gone after it.
void check_next_run_cleans_up()
{
    const auto after = run_json("print('engine back')\n", {"--timeout", "5"});
    CHECK(after.process.exit_code == 0);
    CHECK(captured(after.receipt, "stdout") == "engine back\n");
    CHECK(labelled_boxes().empty());
}

}  // namespace

// docs/hostile.md case 38: the engine down past the deadline.
TEST_CASE("The engine killed mid-run: the receipt says it went away, the box timer still ends the program, and "
          "the daemon answers throughout and runs again once the engine is back")
{
    constexpr double k_timeout_s = 3;
    const EngineRestarter restarter;
    const auto lost = run_and_kill_engine(k_timeout_s);

    // While the engine is down the daemon answers at once, and the box timer ends the program.
    check_ping_answers();
    const auto refused_at = steady_clock::now();
    const auto refused = run_pybox({"exec", "-"}, "print(1)\n");
    const double refused_after = seconds_since(refused_at);
    CHECK(refused.exit_code == 125);
    CHECK_THAT(refused.error_output, Catch::Contains("pybox vm start"));
    const auto status = run_pybox({"vm", "status"});
    CHECK(status.exit_code == 1);
    REQUIRE(wait_until([&] { return box_processes(lost.box).empty(); }, milliseconds(20'000)));
    const double program_lifetime = unix_now() - lost.program_started;

    const double restart_s = restart_engine();
    check_next_run_cleans_up();
    WARN("engine killed: receipt after " << lost.answered_after << " s; a run refused after " << refused_after
                                          << " s; program lifetime " << program_lifetime << " s for a "
                                          << k_timeout_s << " s deadline; vm start took " << restart_s << " s");
    CHECK(refused_after < 1);
    CHECK(program_lifetime > k_timeout_s);
    CHECK(program_lifetime < k_timeout_s + limits::k_box_timer_margin_s + 0.5);
    check_ended_clean();
}

// docs/hostile.md case 38: the engine back before the deadline.
TEST_CASE("The engine killed mid-run and back before the deadline: the program does not outlive the deadline")
{
    constexpr double k_timeout_s = 8;
    const EngineRestarter restarter;
    const auto lost = run_and_kill_engine(k_timeout_s);
    const double restart_s = restart_engine();
    const double back_after = unix_now() - lost.program_started;
    REQUIRE(wait_until([&] { return box_processes(lost.box).empty(); }, milliseconds(20'000)));
    const double program_lifetime = unix_now() - lost.program_started;
    check_next_run_cleans_up();
    WARN("engine killed and started again (" << restart_s << " s), back " << back_after
                                             << " s into the program; program lifetime " << program_lifetime
                                             << " s for a " << k_timeout_s << " s deadline");
    CHECK(back_after < k_timeout_s);
    CHECK(program_lifetime < k_timeout_s + limits::k_box_timer_margin_s + 0.5);
    check_ended_clean();
}

// docs/hostile.md case 54: the attack of issue 28 (item 10), which worked before the box's first
// process made itself undumpable: patch PID 1's kill() into an endless loop through
// /proc/1/mem, so that its timer never kills, then lose the engine.
TEST_CASE("A program that patches the box timer through /proc/1/mem, with the engine killed, still ends by the box "
          "timer")
{
    // The program finds the C library in PID 1's maps, and its kill() at the offset it has in the
    // program's own copy of the same file, writes a jump to itself there, and tells what each
    // step gave (an errno, or what it did) as JSON on stderr.
    const std::string program = R"PY(import ctypes, json, os, platform, sys, time
libc = ctypes.CDLL(None, use_errno=True)
def libc_base(pid):
    for line in open('/proc/%s/maps' % pid):
        fields = line.split()
        if len(fields) == 6 and fields[5].split('/')[-1].startswith('libc.so') and int(fields[2], 16) == 0:
            return int(fields[0].split('-')[0], 16)
found = {}
def step(name, call):
    try:
        value = call()
        found[name] = 'done'
        return value
    except OSError as e:
        found[name] = e.errno
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
def vm_write():
    buffer = ctypes.create_string_buffer(2)
    local, remote = iovec(ctypes.addressof(buffer), 2), iovec(0x10000, 2)
    number = {'x86_64': 311, 'aarch64': 271}[platform.machine()]
    if libc.syscall(ctypes.c_long(number), ctypes.c_long(1), ctypes.byref(local), ctypes.c_ulong(1),
                    ctypes.byref(remote), ctypes.c_ulong(1), ctypes.c_ulong(0)) == -1:
        raise OSError(ctypes.get_errno(), 'process_vm_writev')
step('process_vm_writev', vm_write)
base = step('maps', lambda: libc_base(1))
mem = step('mem', lambda: open('/proc/1/mem', 'r+b', buffering=0))
found['patched'] = False
if base is not None and mem is not None:
    mem.seek(ctypes.cast(libc.kill, ctypes.c_void_p).value - libc_base('self') + base)
    mem.write({'x86_64': b'\xeb\xfe', 'aarch64': b'\x00\x00\x00\x14'}[platform.machine()])
    found['patched'] = True
print(json.dumps(found), file=sys.stderr)
print('started', time.time())
while True:
    time.sleep(0.05)
)PY";
    constexpr double k_timeout_s = 3;
    constexpr int k_eacces = 13;
    const EngineRestarter restarter;
    const auto lost = run_and_kill_engine(k_timeout_s, program);
    INFO("the program's findings: " << lost.stderr_text);
    const auto found = json::parse(lost.stderr_text);
    CHECK(found.at("maps") == k_eacces);
    CHECK(found.at("mem") == k_eacces);
    CHECK(found.at("process_vm_writev") == k_eperm);
    CHECK(found.at("patched") == false);
    const bool gone = wait_until([&] { return box_processes(lost.box).empty(); }, milliseconds(20'000));
    const double program_lifetime = unix_now() - lost.program_started;
    const double restart_s = restart_engine();
    check_next_run_cleans_up();
    WARN("timer patch tried, engine killed: program lifetime " << program_lifetime << " s for a " << k_timeout_s
                                                               << " s deadline; vm start took " << restart_s << " s");
    REQUIRE(gone);
    CHECK(program_lifetime < k_timeout_s + limits::k_box_timer_margin_s + 0.5);
    check_ended_clean();
}

// docs/hostile.md case 39: the client killed (the kernel closes its socket).
TEST_CASE("A client killed mid-run has its box killed and removed within a second")
{
    const auto program = runtime_home() / "hostile_sleeper.py";
    REQUIRE(write_file_atomic(program, "import time\ntime.sleep(20)\n").has_value());
    REQUIRE(labelled_boxes().empty());
    const auto attempts_before = attempt_files();
    auto client = spawn_detached({pybox::test::client_path(), "exec", program.string(), "--timeout", "25"},
                                 runtime_home() / "hostile_killed_client.log");
    REQUIRE(client.has_value());
    const auto box = wait_for_box();
    std::this_thread::sleep_for(milliseconds(700));  // the program has started

    REQUIRE(send_signal(*client, k_signal_kill));
    const double killed_at = unix_now();
    REQUIRE(wait_until([] { return labelled_boxes().empty(); }, milliseconds(10'000)));
    const auto destroyed = destroyed_at(box, killed_at);
    REQUIRE(destroyed.has_value());
    const double gone_after = *destroyed - killed_at;
    WARN("box destroyed " << gone_after << " s after the client was killed");
    CHECK(gone_after < 1.0);
    CHECK(wait_until([&] { return new_attempt_files(attempts_before).empty(); }, milliseconds(5'000)));
    check_ended_clean();
}

// docs/hostile.md case 39: the client closes its socket itself.
TEST_CASE("A client that closes its socket mid-run has its box killed and removed within a second")
{
    REQUIRE(labelled_boxes().empty());
    const auto attempts_before = attempt_files();
    RawReply reply;
    double closed_at = 0;
    std::jthread client([&] {
        reply = raw_exchange(daemon_socket(), post_runs(R"J({"source": "import time\ntime.sleep(20)\n", "timeout_s": 25})J"),
                             milliseconds(2'500));
        closed_at = unix_now();
    });
    const auto box = wait_for_box();
    client.join();
    CHECK(reply.bytes.empty());  // the run was still going when the client left
    REQUIRE(wait_until([] { return labelled_boxes().empty(); }, milliseconds(10'000)));
    const auto destroyed = destroyed_at(box, closed_at);
    REQUIRE(destroyed.has_value());
    const double gone_after = *destroyed - closed_at;
    WARN("box destroyed " << gone_after << " s after the client closed its socket");
    CHECK(gone_after < 1.0);
    CHECK(wait_until([&] { return new_attempt_files(attempts_before).empty(); }, milliseconds(5'000)));
    check_ended_clean();
}

// docs/hostile.md case 30
TEST_CASE("A client of another uid is refused with 403 even when the socket and its folder are world-writable")
{
    SideDaemon daemon("other-uid", json::object{});
    const auto socket = daemon.home() / "pyboxd.sock";
    fs::permissions(daemon.home(), fs::perms::all);
    fs::permissions(socket, fs::perms::all);
    for (const auto& request : {k_ping, post_runs(R"J({"source": "print(1)\n"})J")}) {
        const auto reply = raw_exchange_as(k_nobody, k_nobody, socket, request);
        const auto answers = split_answers(reply.bytes);
        INFO("received: " << reply.bytes);
        REQUIRE(answers.size() == 1);
        CHECK(answers[0].status == 403);
        CHECK(error_code(answers[0]) == "forbidden");
        CHECK(reply.closed_by_server);
    }
    CHECK(labelled_boxes(daemon.home()).empty());
    CHECK(attempt_files(daemon.home()).empty());
    // The owner is still served.
    const auto run = daemon.run_json("print('owner')\n");
    CHECK(run.process.exit_code == 0);
}

// docs/hostile.md case 49
TEST_CASE("A full runtime folder: a run is refused with a clear error before any box exists, nothing is "
          "half-written, and runs work again once there is room")
{
    side_home_unmounted("full");
    Mounted small;
    SideDaemon daemon("full", k_runs_cold, [&small](const fs::path& home) { small.tmpfs(1 << 20, home); });
    fill_up(daemon.home());
    check_run_refused_unwritten(daemon, "No space left on device");
    fs::remove(daemon.home() / "filler");
    const auto run = daemon.run_json("print('room again')\n");
    CHECK(run.process.exit_code == 0);
    CHECK(captured(run.receipt, "stdout") == "room again\n");
    CHECK(attempt_files(daemon.home()).empty());
}

// docs/hostile.md case 50
TEST_CASE("A read-only runtime folder: a run is refused with a clear error before any box exists, and runs work "
          "again once it is writable")
{
    side_home_unmounted("read-only");
    SideDaemon daemon("read-only", k_runs_cold);
    {
        Mounted read_only;
        read_only.read_only(daemon.home());
        check_run_refused_unwritten(daemon, "Read-only file system");
    }
    const auto run = daemon.run_json("print('writable again')\n");
    CHECK(run.process.exit_code == 0);
    CHECK(attempt_files(daemon.home()).empty());
}

// docs/hostile.md case 49
TEST_CASE("pyboxd refuses to start in a full runtime folder with a clear error and leaves no pid file or socket")
{
    const fs::path home = side_home_unmounted("full-start");
    fs::remove_all(home);
    fs::create_directories(home);
    Mounted small;
    small.tmpfs(256 * 1024, home);
    // An installation that has run before (its id exists), on a folder that is now full.
    REQUIRE(write_file_atomic(home / "installation.json", R"({"installation_id": "0123456789abcdef0123456789abcdef"})").has_value());
    fill_up(home);
    const auto before = files_under(home);
    ProcessOptions options;
    options.env["PYBOX_HOME"] = home.string();
    options.timeout = milliseconds(20'000);
    const auto started = run_to_end({pybox::test::daemon_path()}, options);
    INFO("pyboxd said: " << started.output);
    CHECK(started.exit_code == 1);
    CHECK_THAT(started.output, Catch::Contains("No space left on device"));
    CHECK_FALSE(fs::exists(home / "pyboxd.pid"));
    CHECK_FALSE(fs::exists(home / "pyboxd.sock"));
    for (const auto& [file, size] : files_under(home))
        if (!before.contains(file)) CHECK(size == 0);  // folders and the lock file only
}

// docs/hostile.md case 51
TEST_CASE("An unwritable receipts folder: the run's answer is still signed, says it was not kept and why, and so do "
          "the log and pybox receipts show")
{
    side_home_unmounted("receipts-unwritable");
    SideDaemon daemon("receipts-unwritable", k_runs_cold);
    const std::string why = "Read-only file system";
    std::string run_id;
    {
        Mounted read_only;  // undone when the scope ends, the test's failure included
        read_only.read_only(daemon.home() / "receipts");

        const auto streamed = daemon.pybox({"exec", "-"}, "print('unkept')\n");
        INFO("client stderr: " << streamed.error_output);
        CHECK(streamed.exit_code == 0);
        CHECK(streamed.output == "unkept\n");
        CHECK_THAT(streamed.error_output, Catch::Contains("Receipt               NOT KEPT — pyboxd signed the receipt of run") &&
                                              Catch::Contains(why));

        const auto run = daemon.run_json("print('unkept')\n");
        run_id = std::string(run.receipt.at("identity").at("run_id").as_string());
        CHECK(run.process.exit_code == 0);
        CHECK(run.receipt.as_object().contains("signature"));
        CHECK_THAT(run.process.error_output, Catch::Contains("NOT KEPT — pyboxd signed the receipt of run " + run_id +
                                                             " but could not keep it") &&
                                                 Catch::Contains(why));

        const auto raw = raw_exchange(daemon.home() / "pyboxd.sock", post_runs(R"J({"source": "print(1)\n"})J"),
                                      milliseconds(30'000));
        const auto answers = split_answers(raw.bytes);
        REQUIRE(answers.size() == 1);
        CHECK(answers[0].status == 200);
        CHECK_THAT(answers[0].head, Catch::Contains("PyBox-Receipt-Not-Kept: pyboxd signed the receipt of run") &&
                                        Catch::Contains(why));

        const auto shown = daemon.pybox({"receipts", "show", run_id});
        INFO("show: " << shown.error_output);
        CHECK(shown.exit_code == 125);
        CHECK_THAT(shown.error_output, Catch::Contains("signed the receipt of run " + run_id + " but could not keep it") &&
                                           !Catch::Contains("never issued"));
        const auto log = read_file_capped(daemon.home() / "pyboxd.log", 1 << 20);
        REQUIRE(log.has_value());
        CHECK_THAT(*log, Catch::Contains("pyboxd: pyboxd signed the receipt of run " + run_id + " but could not keep it") &&
                             !Catch::Contains("was not signed or kept"));
        CHECK(daemon.pybox({"receipts", "--json"}).output.find(run_id) == std::string::npos);
    }
    const auto again = daemon.run_json("print('kept again')\n");
    CHECK_THAT(again.process.error_output, !Catch::Contains("NOT KEPT"));
    const std::string kept_id(again.receipt.at("identity").at("run_id").as_string());
    CHECK(daemon.pybox({"receipts", "show", kept_id}).exit_code == 0);
    CHECK(labelled_boxes(daemon.home()).empty());
}

// docs/hostile.md case 52
TEST_CASE("A tampered kept receipt: an edited value, a removed signature or another run's receipt in its place is "
          "listed as not signed with why, and never shown as signed")
{
    SideDaemon daemon("receipts-tampered", k_runs_cold);
    std::vector<std::string> ids;
    for (int n = 0; n < 3; ++n) {
        const auto run = daemon.run_json("print('genuine')\n");
        REQUIRE(run.process.exit_code == 0);
        ids.emplace_back(run.receipt.at("identity").at("run_id").as_string());
    }
    const auto file = [&](const std::string& id) { return daemon.home() / "receipts" / (id + ".json"); };
    const auto kept = [&](const std::string& id) { return json::parse(*read_file_capped(file(id), 1 << 20)); };
    const auto overwrite = [&](const std::string& id, const json::value& document) {
        REQUIRE(write_file_atomic(file(id), json::serialize(document)).has_value());
    };
    auto edited = kept(ids[0]);
    edited.at("receipt").at("observed").at("termination").at("exit_code") = 1;
    overwrite(ids[0], edited);
    auto unsigned_receipt = kept(ids[1]);
    unsigned_receipt.at("receipt").as_object().erase("signature");
    overwrite(ids[1], unsigned_receipt);
    const std::string fourth = std::string(daemon.run_json("print('genuine')\n").receipt.at("identity").at("run_id").as_string());
    overwrite(ids[2], kept(fourth));  // another run's genuine receipt in run 2's place

    const std::map<std::string, std::string> expected = {
        {ids[0], "signature_mismatch"}, {ids[1], "not_signed"}, {ids[2], "It is the receipt of run " + fourth}};
    const auto listed = daemon.pybox({"receipts", "--json"});
    REQUIRE(listed.exit_code == 0);
    const auto list = json::parse(listed.output);
    for (const auto& entry : list.at("receipts").as_array()) {
        const std::string id(entry.at("run_id").as_string());
        INFO("run " << id);
        const bool tampered = expected.contains(id);
        CHECK(entry.at("signed").as_bool() == !tampered);
        if (tampered) CHECK_THAT(std::string(entry.at("problem").as_string()), Catch::Contains(expected.at(id)));
    }
    std::istringstream table(daemon.pybox({"receipts"}).output);
    std::size_t marked = 0;
    for (std::string line; std::getline(table, line);) {
        const bool tampered = expected.contains(line.substr(0, 32));
        CHECK((line.find("NOT VERIFIED: ") != std::string::npos) == tampered);
        if (tampered) ++marked;
    }
    CHECK(marked == expected.size());
    for (const auto& [id, why] : expected) {
        INFO("run " << id);
        const auto shown = daemon.pybox({"receipts", "show", id});
        CHECK(shown.exit_code == 125);
        CHECK(shown.output.empty());
        CHECK_THAT(shown.error_output, Catch::Contains("is not shown") && Catch::Contains(why) &&
                                           !Catch::Contains("Signed by"));
        CHECK(daemon.pybox({"receipts", "show", id, "--json"}).exit_code == 125);
    }
    const auto genuine = daemon.pybox({"receipts", "show", fourth});
    CHECK(genuine.exit_code == 0);
    CHECK_THAT(genuine.output, Catch::Contains("Signed by             key"));
}
