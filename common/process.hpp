// Child processes and other platform calls: pids, signals, fds, users. Such calls belong in
// common/; docs/architecture.md ("Conventions") lists the few files elsewhere that make them.
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox {

// argv or envp as the NULL-terminated C array execve and posix_spawn want; owns the strings.
class CArgs {
public:
    explicit CArgs(const std::vector<std::string>& strings) : m_strings(strings)
    {
        for (auto& s : m_strings) m_pointers.push_back(s.data());
        m_pointers.push_back(nullptr);
    }
    char* const* get() { return m_pointers.data(); }

private:
    std::vector<std::string> m_strings;
    std::vector<char*> m_pointers;
};

struct ProcessResult {
    int exit_code = -1;          // valid when signal == 0
    int signal = 0;              // the signal that ended it, 0 if it exited
    bool timed_out = false;      // killed by run_process because the time limit passed
    std::string output;          // stdout (and stderr unless separate_stderr), at most max_output bytes kept
    std::string error_output;    // stderr when separate_stderr, at most max_output bytes kept
    std::size_t output_dropped = 0;  // bytes beyond max_output, both streams together
};

struct ProcessOptions {
    std::chrono::milliseconds timeout{60'000};
    std::size_t max_output = 1 << 20;
    // Bytes written to the child's stdin (then closed); without it stdin is /dev/null.
    // Using it sets SIGPIPE to ignored in this process.
    std::optional<std::string> input;
    bool separate_stderr = false;
    // Extra environment entries (the rest is inherited).
    std::map<std::string, std::string> env;
    std::optional<std::filesystem::path> working_dir;
    // Called on the calling thread with each chunk read from stdout or stderr, as it arrives
    // (before max_output applies), e.g. to follow a long build's progress.
    std::function<void(std::string_view)> on_output;
};

// Runs argv[0] (an absolute path; $PATH is never searched) to completion, blocking the
// calling thread; the whole process group is killed when the timeout passes. Fails only
// when the process cannot be started.
Expected<ProcessResult> run_process(const std::vector<std::string>& argv,
                                    const ProcessOptions& options = {});

// Starts argv in a new session, detached from this process: not our child (so never our
// zombie), stdin /dev/null, stdout and stderr appended to log_file, no other inherited fds,
// `env` added to (or replacing in) the inherited environment. Returns its pid.
Expected<int> spawn_detached(const std::vector<std::string>& argv,
                             const std::filesystem::path& log_file,
                             const std::map<std::string, std::string>& env = {});

// The same with stdin on `stdin_fd` and stdout on `stdout_fd` (pipe ends whose other ends the
// caller holds; the caller closes these two afterwards), stderr on /dev/null, and `env` added to
// the inherited environment. It ends by itself once its command does (or when the caller closes
// its end of stdout and it writes).
Expected<int> spawn_detached_on_pipes(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd,
                                      const std::map<std::string, std::string>& env);

// A running child whose stdout is a pipe this process reads.
struct PipedChild {
    int pid = -1;
    int stdout_fd = -1;  // the read end, close-on-exec; owned by the caller
};

// Starts argv (an absolute path; $PATH is never searched) with stdin and stderr on /dev/null,
// stdout a pipe, in its own process group, with no other inherited fds. Does not wait: the
// caller reads stdout_fd, closes it, and collects the exit with try_reap (or kills the child).
Expected<PipedChild> spawn_with_stdout_pipe(const std::vector<std::string>& argv);

// Collects a child of this process without blocking: its exit status (ProcessResult's
// exit_code/signal) once it has ended, nullopt while it runs or when it is not our child.
std::optional<ProcessResult> try_reap(int pid);

inline constexpr int k_signal_terminate = 15;  // SIGTERM on Linux and macOS
inline constexpr int k_signal_kill = 9;        // SIGKILL
inline constexpr int k_signal_user1 = 10;      // SIGUSR1 on Linux (checked against <signal.h>)
inline constexpr int k_signal_user2 = 12;      // SIGUSR2 on Linux (checked against <signal.h>)

// A handle on a process of this machine that becomes readable when the process ends (a Linux
// pidfd, close-on-exec; the caller owns it). Fails with "process_gone" when there is no such
// process (it has ended), "process_handle_failed" otherwise (e.g. a kernel without pidfd).
Expected<int> open_process_handle(int pid);

// SIGKILL to every process of the group led by pid (a child started in its own group).
void kill_process_group(int pid);
// True while the process exists and has not ended (a zombie counts as ended).
bool process_alive(int pid);
// Sends a signal; true if it was delivered (or the process is already gone, for SIGKILL).
bool send_signal(int pid, int signal);

// The effective uid and the pid of this process.
unsigned current_uid();
int current_pid();
// The uid of the process at the other end of a connected unix socket (SO_PEERCRED).
Expected<unsigned> socket_peer_uid(int fd);
// The groups of the user `uid` in the user and group database, its primary group included;
// empty when no user has that uid.
std::vector<unsigned> groups_of_user(unsigned uid);
// The gid of the group `name`, or nullopt when there is none.
std::optional<unsigned> group_id(const std::string& name);
// Gives the file `path` (not following a link) the group `gid`, its owner unchanged.
Expected<void> set_file_group(const std::filesystem::path& path, unsigned gid);

// Searches the given folders (never $PATH) for an executable.
std::optional<std::filesystem::path> find_executable(const std::string& name,
                                                     const std::vector<std::filesystem::path>& dirs);

// Whether this process's standard error is a terminal.
bool stderr_is_terminal();

// Number of open file descriptors of this process (for leak checks).
std::size_t open_fd_count();

}  // namespace pybox
