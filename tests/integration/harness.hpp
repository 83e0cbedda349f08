// Helpers for the integration tests: they drive the real `pybox` client against the real
// daemon and engine started by the ctest fixture (env_up.sh), in the suite's own PYBOX_HOME.
#pragma once

#include "common/process.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace pybox::test {

// The suite's runtime folder ($PYBOX_HOME, set by ctest).
std::filesystem::path runtime_home();

// How long `pybox args...` may take in a test: 10 minutes for `image build`, `setup` and
// `vm start` (they build or copy images), 2 for anything else.
std::chrono::milliseconds pybox_time_limit(const std::vector<std::string>& args);

// Runs `pybox args...` with `input` on stdin, stdout and stderr kept apart, for at most
// pybox_time_limit(args). The try_ form asserts nothing, so it may be called from several
// threads at once; the other fails the test when the command could not be started or did not
// finish in time, saying what it was waiting for (tests/support/unfinished_command.hpp).
Expected<ProcessResult> try_run_pybox(const std::vector<std::string>& args, const std::string& input = "",
                                      const std::vector<std::pair<std::string, std::string>>& env = {});
ProcessResult run_pybox(const std::vector<std::string>& args, const std::string& input = "",
                        const std::vector<std::pair<std::string, std::string>>& env = {});
// The result of `pybox args...` run by a try_ form, failing the test as run_pybox() does (on
// the test's thread).
ProcessResult finished(const std::vector<std::string>& args, const Expected<ProcessResult>& result);

// `pybox exec - --json extra...`: the parsed receipt (fails the test if it is not JSON).
struct JsonRun {
    ProcessResult process;
    boost::json::value receipt;
};
// A client's JSON answer on stdout (`--json`), required to parse.
boost::json::value answer_of(const ProcessResult& process);

JsonRun run_json(const std::string& program, const std::vector<std::string>& extra = {},
                 const std::vector<std::pair<std::string, std::string>>& env = {});
// The exact bytes the program wrote to "stdout" or "stderr", decoded from the receipt.
std::string captured(const boost::json::value& receipt, const std::string& stream);
// The program's stdout parsed as one JSON document (probes print their findings so).
boost::json::value program_json(const JsonRun& run);

// The boxes the daemon of `home` keeps warm (config.json warm_boxes, issue 10): the unsettled
// attempts of `pybox attempts --json` marked in_progress and warm. Waits up to 5 s while one of
// them is being created (its note has no container ID yet). None when that daemon is not
// running: a killed daemon keeps nothing warm, its boxes are left to the sweep.
struct WarmBox {
    std::string run_id;
    std::string container_id;
};
std::vector<WarmBox> warm_boxes(const std::filesystem::path& home = runtime_home());

// `docker ARGS...` on the suite's engine (with `options`: stdin, a time limit, a reader of the
// output as it comes), stdout and stderr kept apart; asserts nothing.
Expected<ProcessResult> docker(std::vector<std::string> args, ProcessOptions options = {});
// The same, requiring exit 0; the first line of its output (an ID for `create`).
std::string docker_ok(const std::vector<std::string>& args);
// Whether the suite's engine has a box (any state) with this ID or name.
bool box_exists(const std::string& id);

// The boxes left behind: IDs of every box (any state) on the suite's engine that carries the
// label of the installation whose runtime folder is `home` (the suite's, unless another is
// named), less the boxes its daemon keeps warm (read before and after the listing, so a warm
// box made or taken meanwhile is still told apart).
std::vector<std::string> labelled_boxes(const std::filesystem::path& home = runtime_home());
// The same on the engine at `socket` (another engine of a pool).
std::vector<std::string> labelled_boxes_on(const std::filesystem::path& socket, const std::filesystem::path& home);

// How many warm boxes the daemon of `home` keeps, from its config.json: warm_boxes (default 1)
// for each engine that takes runs, none when box_expiry_s leaves a warm box too little time.
int configured_warm_boxes(const std::filesystem::path& home = runtime_home());
// Waits up to `limit` until the daemon of `home` (whose boxes are on the suite's engine) holds
// exactly its configured warm boxes, each started: nothing is being prepared in the background
// (the daemon's fds and attempt notes are then those of an idle daemon). Returns whether it did.
bool warm_boxes_settled(std::chrono::seconds limit = std::chrono::seconds(15),
                        const std::filesystem::path& home = runtime_home());

// The end of every hostile case: no box with this installation's label is left (warm boxes
// aside), a trivial run right after completes normally (exit 0, its output, the box removed),
// and once the daemon's next warm box is ready its open fds come back to the idle count
// (waiting up to 3 s for connections to close), taken by the first call that finds the warm
// boxes settled (waiting up to a minute for them) and the count still for a second.
void check_ended_clean();

// A runtime folder for a second pyboxd (<suite home>-<name>, made afresh) with the given
// config.json, whose boxes run on the suite's engine with the suite's images (their records
// are copied). `prepare_home`, when given, is called with the new, empty folder before anything
// is put in it (e.g. to mount a file system there).
std::filesystem::path make_side_home(const std::string& name, boost::json::object config,
                                     const std::function<void(const std::filesystem::path&)>& prepare_home = {});

// The pids limit tests' fork bomb: a Python program that tries `forks` forks (each child sleeps
// 1 s), prints how many the limit let it make, and waits for them.
std::string fork_bomb_program(int forks);

// The hostile tests' daemonizing child: a Python program whose child double-forks into a new
// session, ignores SIGHUP, SIGINT and SIGTERM and sleeps 60 s with `marker` among its arguments;
// it prints "daemon running" once that process exists (seen in the box's /proc).
std::string daemonizing_child_program(const std::string& marker);
// How many processes of this host have `marker` in their command line (/proc/PID/cmdline).
std::size_t processes_with_argument(const std::string& marker);

// Polls `done` every 100 ms until it holds or `limit` passes; returns whether it held.
template <class Done>
bool within(std::chrono::seconds limit, Done done)
{
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
}

// How a side daemon is started beyond its runtime folder: a system pyboxd (`--system`) listens
// on `socket` (PYBOX_SYSTEM_SOCKET) instead of <home>/pyboxd.sock.
struct SideDaemonStart {
    std::vector<std::string> args;
    std::optional<std::filesystem::path> socket;
};

// A second pyboxd on a folder made by make_side_home(name, config, prepare_home), started as
// `how` says. It is stopped, and waited for, when the object goes away.
class SideDaemon {
public:
    SideDaemon(const std::string& name, boost::json::object config,
               const std::function<void(const std::filesystem::path&)>& prepare_home = {},
               SideDaemonStart how = {});
    ~SideDaemon();
    SideDaemon(const SideDaemon&) = delete;
    SideDaemon& operator=(const SideDaemon&) = delete;

    const std::filesystem::path& home() const { return m_home; }
    // `pybox exec - --json extra...` against this daemon.
    JsonRun run_json(const std::string& program, const std::vector<std::string>& extra = {}) const;
    // `pybox args...` against this daemon; the try_ form asserts nothing (any thread).
    Expected<ProcessResult> try_pybox(const std::vector<std::string>& args, const std::string& input = "") const;
    ProcessResult pybox(const std::vector<std::string>& args, const std::string& input = "") const;
    // SIGKILL, then waits until the process is gone (its socket and pid files stay behind).
    void kill_hard();
    // Starts pyboxd again on the same runtime folder, as after a crash.
    void restart();

private:
    void start();

    std::filesystem::path socket() const { return m_how.socket.value_or(m_home / "pyboxd.sock"); }

    std::filesystem::path m_home;
    SideDaemonStart m_how;
    int m_pid = -1;
};

// The engine's events for one box between two unix times, as `docker events` prints them.
std::vector<boost::json::object> engine_events(const std::string& container_id, std::int64_t since,
                                               std::int64_t until);

// The suite's daemon: its pid ($PYBOX_HOME/pyboxd.pid), resident memory in KiB
// (/proc/<pid>/status VmRSS) and open file descriptors (/proc/<pid>/fd).
int daemon_pid();
std::size_t daemon_rss_kib();
std::size_t daemon_fd_count();
// A process's VmRSS in KiB, or nullopt; asserts nothing, so it may be called from any thread.
std::optional<std::size_t> try_rss_kib(int pid);
// The suite daemon's peak resident memory in KiB (VmHWM): since it started, or since
// reset_daemon_peak_rss() set the peak to what it holds now (/proc/<pid>/clear_refs, "5").
void reset_daemon_peak_rss();
std::size_t daemon_peak_rss_kib();

}  // namespace pybox::test
