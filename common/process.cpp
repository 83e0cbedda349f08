#include "common/process.hpp"

#include "common/api_error_codes.hpp"
#include "common/posix.hpp"
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace pybox {

namespace {


std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra)
{
    std::vector<std::string> env;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        std::string_view text(*entry);
        const auto name = text.substr(0, text.find('='));
        if (extra.find(std::string(name)) == extra.end()) env.emplace_back(text);
    }
    for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
    return env;
}

Expected<void> require_absolute(const std::vector<std::string>& argv)
{
    if (argv.empty() || argv[0].empty() || argv[0][0] != '/')
        return make_error(api_error::k_spawn_failed, "A program to run must be named by an absolute path.");
    return {};
}

void close_fd(int& fd)
{
    if (fd >= 0) ::close(fd);
    fd = -1;
}

}  // namespace

namespace {

// The parent's ends of the pipes to one child; -1 once closed.
struct ChildPipes {
    int input = -1;
    int output = -1;
    int error = -1;
    ~ChildPipes()
    {
        close_fd(input);
        close_fd(output);
        close_fd(error);
    }
};

bool make_pipe(int fds[2]) { return ::pipe2(fds, O_CLOEXEC) == 0; }

// Spawn attributes with `flags` for a child that starts with no signal blocked and every signal
// at its default action, whatever this process ignores or blocks.
void init_clean_signals(posix_spawnattr_t& attributes, int flags)
{
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, static_cast<short>(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
    sigset_t no_signals;
    sigemptyset(&no_signals);
    posix_spawnattr_setsigmask(&attributes, &no_signals);
    sigset_t all_signals;
    sigfillset(&all_signals);
    posix_spawnattr_setsigdefault(&attributes, &all_signals);
}

void keep_bounded(std::string& kept, std::size_t& dropped, std::size_t cap, std::string_view bytes)
{
    const std::size_t room = cap - std::min(cap, kept.size());
    kept.append(bytes.substr(0, std::min(room, bytes.size())));
    dropped += bytes.size() - std::min(room, bytes.size());
}

}  // namespace

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const ProcessOptions& options)
{
    if (auto ok = require_absolute(argv); !ok) return ok.error();
    int out_pipe[2], err_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1};
    if (!make_pipe(out_pipe) || (options.separate_stderr && !make_pipe(err_pipe)) ||
        (options.input && !make_pipe(in_pipe)))
        return make_error(api_error::k_spawn_failed, "Cannot create a pipe: " + errno_text(errno) + ".");
    ChildPipes pipes;
    pipes.output = out_pipe[0];
    pipes.error = err_pipe[0];
    pipes.input = in_pipe[1];

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (options.input)
        posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
    else
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, options.separate_stderr ? err_pipe[1] : out_pipe[1], 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (options.working_dir)
        posix_spawn_file_actions_addchdir_np(&actions, options.working_dir->c_str());
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);

    CArgs c_argv(argv);
    CArgs c_env(merged_environment(options.env));
    pid_t pid = -1;
    const int spawned = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, c_argv.get(), c_env.get());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    for (int child_end : {out_pipe[1], err_pipe[1], in_pipe[0]})
        if (child_end >= 0) ::close(child_end);
    if (spawned != 0)
        return make_error(api_error::k_spawn_failed, "Cannot start " + argv[0] + ": " + errno_text(spawned) + ".");

    if (options.input) ::signal(SIGPIPE, SIG_IGN);  // a child that exits early must not kill us
    ProcessResult result;
    std::string_view pending_input = options.input ? std::string_view(*options.input) : std::string_view();
    if (pipes.input >= 0) ::fcntl(pipes.input, F_SETFL, O_NONBLOCK);
    if (pipes.input >= 0 && pending_input.empty()) close_fd(pipes.input);
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    char buffer[16 * 1024];
    while (pipes.output >= 0 || pipes.error >= 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            ::kill(-pid, SIGKILL);
            break;
        }
        pollfd watched[3] = {{pipes.output, POLLIN, 0}, {pipes.error, POLLIN, 0}, {pipes.input, POLLOUT, 0}};
        const int ready = ::poll(watched, 3, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        if (watched[2].revents != 0) {
            const ssize_t put = ::write(pipes.input, pending_input.data(), pending_input.size());
            if (put > 0) pending_input.remove_prefix(static_cast<std::size_t>(put));
            if ((put < 0 && errno != EAGAIN && errno != EINTR) || pending_input.empty()) close_fd(pipes.input);
        }
        for (int index : {0, 1}) {
            if (watched[index].revents == 0) continue;
            int& fd = index == 0 ? pipes.output : pipes.error;
            const ssize_t got = ::read(fd, buffer, sizeof buffer);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                close_fd(fd);
                continue;
            }
            const std::string_view chunk(buffer, static_cast<std::size_t>(got));
            if (options.on_output) options.on_output(chunk);
            keep_bounded(index == 0 ? result.output : result.error_output, result.output_dropped,
                         options.max_output, chunk);
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
}

namespace {

// Starts argv with `actions` and `env` in a new session, from a short-lived intermediate child,
// so the process is re-parented to init and never becomes our zombie when it dies. Consumes
// `actions`. Returns the pid.
Expected<int> spawn_orphan(const std::vector<std::string>& argv, posix_spawn_file_actions_t& actions,
                           const std::vector<std::string>& env)
{
    // Sockets the daemon holds (its listening socket among them) must not leak into a child
    // that outlives it.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attributes;
    init_clean_signals(attributes, POSIX_SPAWN_SETSID);

    CArgs c_argv(argv);
    CArgs c_env(env);
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
        return make_error(api_error::k_spawn_failed, "Cannot create a pipe: " + errno_text(errno) + ".");
    }
    // Everything the child needs was allocated above; it only calls posix_spawn, write and _exit.
    const pid_t intermediate = ::fork();
    if (intermediate == 0) {
        ::close(report[0]);
        pid_t pid = -1;
        const int spawned = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, c_argv.get(), c_env.get());
        const int message[2] = {spawned, static_cast<int>(pid)};
        const bool sent = ::write(report[1], message, sizeof message) == static_cast<ssize_t>(sizeof message);
        ::_exit(sent ? 0 : 1);
    }
    ::close(report[1]);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (intermediate < 0) {
        ::close(report[0]);
        return make_error(api_error::k_spawn_failed, "Cannot fork: " + errno_text(errno) + ".");
    }
    int message[2] = {ECHILD, -1};
    ssize_t got;
    do {
        got = ::read(report[0], message, sizeof message);
    } while (got < 0 && errno == EINTR);
    ::close(report[0]);
    int status = 0;
    while (::waitpid(intermediate, &status, 0) < 0 && errno == EINTR) {}
    if (got != static_cast<ssize_t>(sizeof message) || message[0] != 0)
        return make_error(api_error::k_spawn_failed, "Cannot start " + argv[0] + ": " + errno_text(message[0]) + ".");
    return message[1];
}

}  // namespace

Expected<int> spawn_detached(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                             const std::map<std::string, std::string>& env)
{
    if (auto ok = require_absolute(argv); !ok) return ok.error();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    return spawn_orphan(argv, actions, merged_environment(env));
}

Expected<int> spawn_detached_on_pipes(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd,
                                      const std::map<std::string, std::string>& env)
{
    if (auto ok = require_absolute(argv); !ok) return ok.error();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    return spawn_orphan(argv, actions, merged_environment(env));
}

Expected<PipedChild> spawn_with_stdout_pipe(const std::vector<std::string>& argv)
{
    if (auto ok = require_absolute(argv); !ok) return ok.error();
    int out_pipe[2];
    if (!make_pipe(out_pipe)) return make_error(api_error::k_spawn_failed, "Cannot create a pipe: " + errno_text(errno) + ".");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attributes;
    init_clean_signals(attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);

    CArgs c_argv(argv);
    pid_t pid = -1;
    const int spawned = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, c_argv.get(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(out_pipe[1]);
    if (spawned != 0) {
        ::close(out_pipe[0]);
        return make_error(api_error::k_spawn_failed, "Cannot start " + argv[0] + ": " + errno_text(spawned) + ".");
    }
    return PipedChild{static_cast<int>(pid), out_pipe[0]};
}

std::optional<ProcessResult> try_reap(int pid)
{
    if (pid <= 0) return std::nullopt;
    int status = 0;
    pid_t reaped;
    do {
        reaped = ::waitpid(pid, &status, WNOHANG);
    } while (reaped < 0 && errno == EINTR);
    if (reaped != pid) return std::nullopt;
    ProcessResult result;
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
}

namespace {

// A zombie has ended; only its parent has not collected it yet.
bool is_zombie(int pid)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char text[512];
    const ssize_t got = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (got <= 0) return false;
    const std::string_view stat(text, static_cast<std::size_t>(got));
    const auto name_end = stat.rfind(')');  // the state follows the parenthesised name
    return name_end != std::string_view::npos && name_end + 2 < stat.size() &&
           (stat[name_end + 2] == 'Z' || stat[name_end + 2] == 'X');
}

}  // namespace

bool process_alive(int pid)
{
    if (pid <= 0) return false;
    // Reap it if it is our own child that has exited.
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;
    if (::kill(pid, 0) != 0 && errno != EPERM) return false;
    return !is_zombie(pid);
}

static_assert(k_signal_user1 == SIGUSR1 && k_signal_user2 == SIGUSR2 && k_signal_kill == SIGKILL && k_signal_terminate == SIGTERM);

Expected<int> open_process_handle(int pid)
{
    const long fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return make_error(errno == ESRCH ? api_error::k_process_gone : api_error::k_process_handle_failed,
                          "Cannot watch process " + std::to_string(pid) + ": " + errno_text(errno) + ".");
    return static_cast<int>(fd);
}

void kill_process_group(int pid)
{
    if (pid > 0) ::kill(-pid, SIGKILL);
}

bool send_signal(int pid, int signal)
{
    if (pid <= 0) return false;
    if (::kill(pid, signal) == 0) return true;
    return errno == ESRCH && signal == SIGKILL;
}

unsigned current_uid() { return static_cast<unsigned>(::geteuid()); }

int current_pid() { return static_cast<int>(::getpid()); }

Expected<unsigned> socket_peer_uid(int fd)
{
    ucred credentials{};
    socklen_t length = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
        return make_error(api_error::k_peer_unknown, "Cannot read the peer's credentials: " + errno_text(errno) + ".");
    return static_cast<unsigned>(credentials.uid);
}

namespace {

constexpr int k_max_groups = 4096;
constexpr std::size_t k_lookup_buffer = 64 * 1024;

}  // namespace

std::vector<unsigned> groups_of_user(unsigned uid)
{
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(k_lookup_buffer);
    if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return {};
    std::vector<gid_t> groups(k_max_groups);
    int count = k_max_groups;
    if (::getgrouplist(entry.pw_name, entry.pw_gid, groups.data(), &count) < 0) return {entry.pw_gid};
    return {groups.begin(), groups.begin() + count};
}

std::optional<unsigned> group_id(const std::string& name)
{
    group entry{};
    group* found = nullptr;
    std::vector<char> buffer(k_lookup_buffer);
    if (::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
        return std::nullopt;
    return entry.gr_gid;
}

Expected<void> set_file_group(const std::filesystem::path& path, unsigned gid)
{
    if (::lchown(path.c_str(), static_cast<uid_t>(-1), static_cast<gid_t>(gid)) != 0)
        return make_error(api_error::k_file_unwritable, "Cannot give " + path.string() + " the group " + std::to_string(gid) +
                                                 ": " + errno_text(errno) + ".");
    return {};
}

std::optional<std::filesystem::path> find_executable(const std::string& name,
                                                     const std::vector<std::filesystem::path>& dirs)
{
    for (const auto& dir : dirs) {
        const auto candidate = dir / name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::nullopt;
}

std::size_t open_fd_count()
{
    std::size_t count = 0;
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        while (const dirent* entry = ::readdir(dir))
            if (entry->d_name[0] != '.') ++count;
        ::closedir(dir);
        return count - 1;  // the directory stream's own fd
    }
    return 0;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace pybox
