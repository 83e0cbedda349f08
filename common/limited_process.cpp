#include "common/limited_process.hpp"

#include "common/api_error_codes.hpp"
#include "common/posix.hpp"
#include "common/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace pybox {

namespace {

// After the program ended (or was killed), how long its output may take to reach its end.
constexpr std::chrono::milliseconds k_drain_after_end{250};

struct Pipe {
    UniqueFd read;
    UniqueFd write;
};

bool open_pipe(Pipe& pipe)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    pipe.read.reset(fds[0]);
    pipe.write.reset(fds[1]);
    return true;
}

int resource_of(ResourceKind kind)
{
    switch (kind) {
    case ResourceKind::address_space: return RLIMIT_AS;
    case ResourceKind::processes: return RLIMIT_NPROC;
    case ResourceKind::cpu_seconds: return RLIMIT_CPU;
    case ResourceKind::file_size: return RLIMIT_FSIZE;
    case ResourceKind::open_files: return RLIMIT_NOFILE;
    case ResourceKind::core_size: return RLIMIT_CORE;
    }
    return RLIMIT_CORE;
}


struct PreparedLimit {
    int resource;
    rlimit value;
};

// In the forked child: only async-signal-safe calls. Reports errno on `report` when it fails.
[[noreturn]] void become_program(char* const* argv, char* const* envp, const char* working_dir,
                                 const std::vector<PreparedLimit>& limits, int input, int output, int error,
                                 int report)
{
    int failed = 0;
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction standard {};
    standard.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &standard, nullptr);
    if (::setsid() < 0 || ::dup2(input, 0) < 0 || ::dup2(output, 1) < 0 || ::dup2(error, 2) < 0 ||
        ::chdir(working_dir) != 0 || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        failed = errno;
    }
    for (const auto& limit : limits)
        if (failed == 0 && ::setrlimit(limit.resource, &limit.value) != 0) failed = errno;
    if (failed == 0) {
        // Only fds 0-2 and the report pipe (close-on-exec) stay open.
        ::close_range(3, static_cast<unsigned>(report) - 1, 0);
        ::close_range(static_cast<unsigned>(report) + 1, ~0U, 0);
        ::execve(argv[0], argv, envp);
        failed = errno;
    }
    [[maybe_unused]] const auto sent = ::write(report, &failed, sizeof failed);
    ::_exit(127);
}

void keep(KeptStream& stream, std::size_t cap, const char* bytes, std::size_t size)
{
    const std::size_t room = cap - std::min(cap, stream.bytes.size());
    stream.bytes.append(bytes, std::min(room, size));
    stream.total_bytes += size;
}

// The process group of a task, from /proc/<pid>/stat (the field after state and ppid).
std::optional<long> process_group_of(const std::string& pid)
{
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text;
    std::getline(stat, text);
    const auto close = text.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    char state = 0;
    long parent = 0;
    long group = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %ld %ld", &state, &parent, &group) != 3) return std::nullopt;
    if (state == 'Z') return std::nullopt;  // ended, only not yet reaped
    return group;
}

template <class Visit>
void for_each_process(Visit visit)
{
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) return;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
            visit(name);
    }
    ::closedir(dir);
}

// Whether a live process other than `except` is in process group `group`.
bool group_has_others(int group, int except)
{
    bool found = false;
    for_each_process([&](const std::string& pid) {
        if (found || std::stol(pid) == except) return;
        if (const auto member = process_group_of(pid); member && *member == group) found = true;
    });
    return found;
}

int wait_status(int pid)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return status;
}

}  // namespace

Expected<LimitedResult> run_limited(const LimitedRun& run)
{
    if (run.argv.empty() || run.argv[0].empty() || run.argv[0][0] != '/')
        return make_error(api_error::k_spawn_failed, "A program to run must be named by an absolute path.");
    Pipe input, output, error, report;
    if (!open_pipe(input) || !open_pipe(output) || !open_pipe(error) || !open_pipe(report))
        return make_error(api_error::k_spawn_failed, "Cannot create a pipe: " + errno_text(errno) + ".");
    std::vector<PreparedLimit> limits;
    for (const auto& limit : run.limits)
        limits.push_back({resource_of(limit.kind),
                          rlimit{static_cast<rlim_t>(limit.soft), static_cast<rlim_t>(limit.hard)}});
    CArgs argv(run.argv);
    CArgs envp(run.environment);
    const std::string working_dir = run.working_dir.string();
    ::signal(SIGPIPE, SIG_IGN);  // a program that exits without reading stdin must not kill us

    LimitedResult result;
    result.started = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) return make_error(api_error::k_spawn_failed, "Cannot fork: " + errno_text(errno) + ".");
    if (pid == 0)
        become_program(argv.get(), envp.get(), working_dir.c_str(), limits, input.read.get(), output.write.get(),
                       error.write.get(), report.write.get());
    input.read.close();
    output.write.close();
    error.write.close();
    report.write.close();
    int failed = 0;
    ssize_t got;
    do {
        got = ::read(report.read.get(), &failed, sizeof failed);
    } while (got < 0 && errno == EINTR);
    if (got == static_cast<ssize_t>(sizeof failed)) {
        wait_status(pid);
        return make_error(api_error::k_spawn_failed, "Cannot start " + run.argv[0] + ": " + errno_text(failed) + ".");
    }
    UniqueFd exited(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (exited.get() < 0) {
        ::kill(-pid, SIGKILL);
        wait_status(pid);
        return make_error(api_error::k_spawn_failed, "Cannot watch the program: " + errno_text(errno) + ".");
    }

    std::string_view pending = run.input;
    ::fcntl(input.write.get(), F_SETFL, O_NONBLOCK);
    if (pending.empty()) input.write.close();
    const auto deadline = result.started + run.deadline;
    std::optional<int> status;
    char buffer[16 * 1024];
    // Until the program has ended and both streams are at their end, or the deadline.
    while (!status || output.read.get() >= 0 || error.read.get() >= 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd watched[4] = {{output.read.get(), POLLIN, 0},
                             {error.read.get(), POLLIN, 0},
                             {input.write.get(), POLLOUT, 0},
                             {status ? -1 : exited.get(), POLLIN, 0}};
        const int ready = ::poll(watched, 4, static_cast<int>(std::min<long long>(left.count() + 1, 1000)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        if (watched[2].revents != 0) {
            const ssize_t put = ::write(input.write.get(), pending.data(), pending.size());
            if (put > 0) pending.remove_prefix(static_cast<std::size_t>(put));
            if ((put < 0 && errno != EAGAIN && errno != EINTR) || pending.empty()) input.write.close();
        }
        for (int index : {0, 1}) {
            if (watched[index].revents == 0) continue;
            UniqueFd& fd = index == 0 ? output.read : error.read;
            const ssize_t read = ::read(fd.get(), buffer, sizeof buffer);
            if (read < 0 && errno == EINTR) continue;
            if (read <= 0) {
                fd.close();
                continue;
            }
            keep(index == 0 ? result.stdout_stream : result.stderr_stream, run.output_cap, buffer,
                 static_cast<std::size_t>(read));
        }
        if (watched[3].revents != 0) {
            // Ended, not yet reaped: its pid, and so its group's id, cannot be reused before the
            // group is killed.
            result.group_killed_after_exit = group_has_others(pid, pid);
            ::kill(-pid, SIGKILL);
            status = wait_status(pid);
            result.ended = std::chrono::steady_clock::now();
        }
    }
    if (!status) {
        result.deadline_kill_sent = true;
        result.deadline_kill_sent_at = std::chrono::system_clock::now();
        result.deadline_kill_delivered = ::kill(-pid, SIGKILL) == 0;
        status = wait_status(pid);
        result.ended = std::chrono::steady_clock::now();
    }
    // What is left in the pipes (a killed program's last words), while the rest of its killed
    // group finishes dying; not waiting long for a process that escaped the group and holds them.
    const auto drain_until = std::chrono::steady_clock::now() + k_drain_after_end;
    while ((output.read.get() >= 0 || error.read.get() >= 0) && std::chrono::steady_clock::now() < drain_until) {
        pollfd watched[2] = {{output.read.get(), POLLIN, 0}, {error.read.get(), POLLIN, 0}};
        if (::poll(watched, 2, static_cast<int>(k_drain_after_end.count())) <= 0) continue;
        for (int index : {0, 1}) {
            if (watched[index].revents == 0) continue;
            UniqueFd& fd = index == 0 ? output.read : error.read;
            const ssize_t read = ::read(fd.get(), buffer, sizeof buffer);
            if (read > 0)
                keep(index == 0 ? result.stdout_stream : result.stderr_stream, run.output_cap, buffer,
                     static_cast<std::size_t>(read));
            else if (read == 0 || errno != EINTR)
                fd.close();
        }
    }
    result.streams_ended = output.read.get() < 0 && error.read.get() < 0;
    if (WIFEXITED(*status)) result.exit_code = WEXITSTATUS(*status);
    if (WIFSIGNALED(*status)) result.signal = WTERMSIG(*status);
    return result;
}

std::int64_t count_user_tasks(unsigned uid)
{
    std::int64_t tasks = 0;
    for_each_process([&](const std::string& pid) {
        std::ifstream status("/proc/" + pid + "/status");
        std::string line;
        long real_uid = -1;
        long threads = 0;
        while (std::getline(status, line)) {
            if (line.rfind("Uid:", 0) == 0) real_uid = std::strtol(line.c_str() + 4, nullptr, 10);
            if (line.rfind("Threads:", 0) == 0) threads = std::strtol(line.c_str() + 8, nullptr, 10);
        }
        if (real_uid == static_cast<long>(uid)) tasks += std::max(threads, 1L);
    });
    return tasks;
}

Expected<std::filesystem::path> make_temporary_folder(const std::filesystem::path& parent, const std::string& prefix)
{
    std::string name = (parent / (prefix + "XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr)
        return make_error(api_error::k_file_unwritable, "Cannot make a temporary folder in " + parent.string() + ": " +
                                                 errno_text(errno) + ".");
    return std::filesystem::path(name);
}

std::string current_user_and_group()
{
    return std::to_string(::getuid()) + ":" + std::to_string(::getgid());
}

unsigned current_real_uid() { return static_cast<unsigned>(::getuid()); }

bool running_as_root() { return ::getuid() == 0 || ::geteuid() == 0; }

}  // namespace pybox
