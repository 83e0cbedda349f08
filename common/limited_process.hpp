// A program run on this host under process limits, in a session of its own, with exactly the
// environment it is given: the platform part of the unsealed runner (client/unsealed/). No
// container: whatever the limits do not cover, the program may do as the user.
//
// run_limited() blocks the calling thread until the program has ended and been reaped (at most
// the deadline plus a moment to drain the output). It forks; between fork and exec the child
// makes only async-signal-safe calls (everything is prepared before), so any thread of a
// multi-threaded process may call it. Every fd it opens is closed again; the child gets fds
// 0-2 only. It sets SIGPIPE to ignored in this process.
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pybox {

enum class ResourceKind { address_space, processes, cpu_seconds, file_size, open_files, core_size };

// One setrlimit() made in the child before exec.
struct ResourceLimit {
    ResourceKind kind;
    std::int64_t soft = 0;
    std::int64_t hard = 0;

    friend bool operator==(const ResourceLimit&, const ResourceLimit&) = default;
};

struct LimitedRun {
    std::vector<std::string> argv;         // argv[0] an absolute path; $PATH is never searched
    std::vector<std::string> environment;  // "NAME=value": the whole environment, nothing inherited
    std::filesystem::path working_dir;
    std::string input;                     // written to stdin, which is then closed
    std::vector<ResourceLimit> limits;
    std::chrono::milliseconds deadline{2'000};  // from the start; then SIGKILL to the process group
    std::size_t output_cap = 0;            // bytes kept per stream; the rest is read and counted
};

// One output stream: the first output_cap bytes, and how many the program wrote in all.
struct KeptStream {
    std::string bytes;
    std::uint64_t total_bytes = 0;
};

struct LimitedResult {
    std::optional<int> exit_code;  // the program exited by itself with this code...
    std::optional<int> signal;     // ...or a signal ended it (from its wait status)
    bool deadline_kill_sent = false;
    bool deadline_kill_delivered = false;  // kill() found the group (the program had not been reaped)
    std::chrono::system_clock::time_point deadline_kill_sent_at{};
    // Something was still in the program's process group after it ended; it was SIGKILLed.
    bool group_killed_after_exit = false;
    KeptStream stdout_stream;
    KeptStream stderr_stream;
    bool streams_ended = false;  // both streams reached their end (no process left holding them)
    std::chrono::steady_clock::time_point started{};
    std::chrono::steady_clock::time_point ended{};  // the program was reaped
};

// Runs `run`: a new session (so a process group of its own), stdin a pipe, stdout and stderr
// pipes, its working folder, its limits (no new privileges; every signal at its default action),
// then exec. At the deadline SIGKILL goes to the whole process group; when the program ends
// first, whatever is left in its group is SIGKILLed then. Processes that left the group (setsid)
// are beyond reach. Fails ("spawn_failed") only when the program could not be started.
Expected<LimitedResult> run_limited(const LimitedRun& run);

// How many tasks (processes and threads) have `uid` as their real uid: what RLIMIT_NPROC
// counts. Read from /proc; 0 when it cannot be read.
std::int64_t count_user_tasks(unsigned uid);

// Makes a fresh private folder (0700) under `parent` named prefix + random characters.
Expected<std::filesystem::path> make_temporary_folder(const std::filesystem::path& parent,
                                                      const std::string& prefix);

// The current real uid and gid ("1000:1000"), and the real uid alone.
std::string current_user_and_group();
unsigned current_real_uid();
// Whether this process runs as root (real or effective uid 0), whom RLIMIT_NPROC does not bind.
bool running_as_root();

}  // namespace pybox
