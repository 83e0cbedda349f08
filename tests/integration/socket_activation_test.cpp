// Socket activation (docs/install.md "Services") with the built pyboxd, started exactly as systemd
// starts it from pyboxd.socket: these machines run no systemd, so the test is the service
// manager. It binds and listens on the daemon's socket itself, then starts pyboxd with that
// socket as fd 3, LISTEN_FDS and LISTEN_PID set to pyboxd's own pid (through /bin/sh, whose pid
// `exec` hands to pyboxd), in a runtime folder of its own whose boxes run on the suite's engine.
#include "common/files.hpp"
#include "common/posix.hpp"
#include "common/version.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/build_paths.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace pybox::test;
namespace fs = std::filesystem;

namespace {

// An fd the test needs to have opened, closed when the object goes away.
struct Fd : pybox::UniqueFd {
    explicit Fd(int fd) : UniqueFd(fd) { REQUIRE(fd >= 0); }
};

sockaddr_un unix_address(const fs::path& path)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.string().size() < sizeof address.sun_path);
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    return address;
}

// The socket as pyboxd.socket makes it: bound, 0600, listening, close-on-exec in this process.
int listen_like_systemd(const fs::path& path)
{
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    const auto address = unix_address(path);
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    return fd;
}

int connect_to(const fs::path& path)
{
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    const auto address = unix_address(path);
    REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    return fd;
}

// Everything the peer sends until it closes, or what came within `limit`.
std::string read_until_closed(int fd, std::chrono::seconds limit)
{
    std::string received;
    const auto give_up = std::chrono::steady_clock::now() + limit;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
        if (left.count() <= 0) return received;
        pollfd wanted{fd, POLLIN, 0};
        if (::poll(&wanted, 1, static_cast<int>(left.count())) <= 0) return received;
        char chunk[4096];
        const auto got = ::read(fd, chunk, sizeof chunk);
        if (got <= 0) return received;
        received.append(chunk, static_cast<std::size_t>(got));
    }
}

// pyboxd started as a service manager starts it: `fd_for_3` becomes its fd 3, LISTEN_FDS is
// `listen_fds` and LISTEN_PID its pid; its output goes to <home>/pyboxd.log. A child of this
// process, so its exit status can be read; killed (SIGKILL) if still running at the end.
class ActivatedDaemon {
public:
    ActivatedDaemon(const fs::path& home, int fd_for_3, const std::string& listen_fds) : m_home(home)
    {
        const std::string log = (home / "pyboxd.log").string();
        // Everything the child needs is made before fork: it only calls dup2, open, fcntl, execve.
        const std::vector<std::string> argv{"/bin/sh", "-c", "export LISTEN_PID=$$; exec \"$0\"", pybox::test::daemon_path()};
        std::vector<std::string> env{"PYBOX_HOME=" + home.string(), "LISTEN_FDS=" + listen_fds, "PATH=/usr/bin:/bin",
                                     "HOME=" + home.string()};
        std::vector<char*> c_argv, c_env;
        for (const auto& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
        c_argv.push_back(nullptr);
        for (const auto& entry : env) c_env.push_back(const_cast<char*>(entry.c_str()));
        c_env.push_back(nullptr);
        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
            const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (out < 0 || in < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) ::_exit(126);
            if (fd_for_3 == 3 ? ::fcntl(3, F_SETFD, 0) < 0 : ::dup2(fd_for_3, 3) < 0) ::_exit(126);
            ::execve(c_argv[0], c_argv.data(), c_env.data());
            ::_exit(127);
        }
    }
    ~ActivatedDaemon()
    {
        if (m_status) return;
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, nullptr, 0);
    }
    ActivatedDaemon(const ActivatedDaemon&) = delete;
    ActivatedDaemon& operator=(const ActivatedDaemon&) = delete;

    int pid() const { return m_pid; }
    std::string log() const
    {
        std::ifstream file(m_home / "pyboxd.log");
        return std::string(std::istreambuf_iterator<char>(file), {});
    }
    // Its exit status (waitpid's) once it has ended, waiting up to `limit`; nullopt if it runs on.
    std::optional<int> ended_within(std::chrono::seconds limit)
    {
        within(limit, [this] {
            int status = 0;
            if (::waitpid(m_pid, &status, WNOHANG) == m_pid) m_status = status;
            return m_status.has_value();
        });
        return m_status;
    }

private:
    fs::path m_home;
    pid_t m_pid = -1;
    std::optional<int> m_status;
};

std::string http_get(const std::string& target)
{
    return "GET " + target + " HTTP/1.1\r\nHost: pybox\r\nConnection: close\r\n\r\n";
}

void send_all(int fd, const std::string& bytes)
{
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

// The environment a process started with (/proc/<pid>/environ), one entry per element.
std::vector<std::string> initial_environment(int pid)
{
    std::ifstream file("/proc/" + std::to_string(pid) + "/environ");
    std::vector<std::string> entries;
    for (std::string entry; std::getline(file, entry, '\0');) entries.push_back(entry);
    return entries;
}

// The processes whose parent is `pid`.
std::vector<int> children_of(int pid)
{
    std::vector<int> children;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream status(entry.path() / "status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("PPid:", 0) == 0) {
                if (std::stoi(line.substr(5)) == pid) children.push_back(std::stoi(name));
                break;
            }
    }
    return children;
}

bool has_listen_variable(const std::vector<std::string>& environment)
{
    for (const auto& entry : environment)
        if (entry.rfind("LISTEN_", 0) == 0) return true;
    return false;
}

}  // namespace

TEST_CASE("A socket-activated pyboxd answers the connection made before it started, then every pybox call",
          "[activation]")
{
    const auto home = make_side_home("activated", {});
    const auto socket_path = home / "pyboxd.sock";
    const Fd listener(listen_like_systemd(socket_path));

    // The first client connects and asks while no pyboxd exists: the kernel queues it.
    const Fd early(connect_to(socket_path));
    send_all(early.get(), http_get("/v1/ping"));
    ActivatedDaemon daemon(home, listener.get(), "1");
    const std::string answer = read_until_closed(early.get(), std::chrono::seconds(20));
    INFO("pyboxd's log: " << daemon.log());
    CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(answer.find(pybox::version()) != std::string::npos);
    CHECK(daemon.log().find("listening on " + socket_path.string() + ", a socket from the service manager") !=
          std::string::npos);
    CHECK(daemon.log().find("clients look for") == std::string::npos);  // the socket is where pybox looks

    const auto version = try_run_pybox({"version"}, "", {{"PYBOX_HOME", home.string()}});
    REQUIRE(version.has_value());
    CHECK(version->exit_code == 0);
    CHECK(version->output.find("\npyboxd " + pybox::version() + " (API ") != std::string::npos);

    // pyboxd removed LISTEN_* from its environment at start: what it runs (here the watcher of a
    // run, a child of pyboxd) starts without them. Its own /proc/<pid>/environ is the block it
    // was started with, which unsetenv does not rewrite, so it still shows them.
    CHECK(has_listen_variable(initial_environment(daemon.pid())));
    auto run = std::async(std::launch::async, [&home] {
        return try_run_pybox({"exec", "-", "--json"}, "import time\ntime.sleep(1.5)\n", {{"PYBOX_HOME", home.string()}});
    });
    int seen = 0;  // children whose environment was read (one that ended meanwhile reads as empty)
    within(std::chrono::seconds(20), [&] {
        for (const int child : children_of(daemon.pid())) {
            const auto environment = initial_environment(child);
            if (environment.empty()) continue;
            INFO("child " << child << " of pyboxd");
            CHECK_FALSE(has_listen_variable(environment));
            ++seen;
        }
        return seen > 0;
    });
    CHECK(seen > 0);
    const auto ran = run.get();
    REQUIRE(ran.has_value());
    CHECK(ran->exit_code == 0);

    // Stopped by SIGTERM, pyboxd leaves the socket file, which is the service manager's.
    REQUIRE(::kill(daemon.pid(), SIGTERM) == 0);
    const auto status = daemon.ended_within(std::chrono::seconds(30));
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(fs::is_socket(fs::symlink_status(socket_path)));
    CHECK(labelled_boxes(home).empty());
}

TEST_CASE("A socket-activated pyboxd given two sockets stops at start and says why", "[activation]")
{
    const auto home = make_side_home("activated-two", {});
    const Fd listener(listen_like_systemd(home / "pyboxd.sock"));
    ActivatedDaemon daemon(home, listener.get(), "2");
    const auto status = daemon.ended_within(std::chrono::seconds(20));
    REQUIRE(status.has_value());
    INFO("pyboxd's log: " << daemon.log());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) != 0);
    CHECK_THAT(daemon.log(), Catch::Contains("passed 2 sockets (LISTEN_FDS)") && Catch::Contains("ListenStream="));
}

TEST_CASE("A socket-activated pyboxd whose fd 3 is a regular file stops at start and says why", "[activation]")
{
    const auto home = make_side_home("activated-file", {});
    REQUIRE(pybox::write_file_atomic(home / "not-a-socket", "x").has_value());
    const Fd file(::open((home / "not-a-socket").c_str(), O_RDONLY | O_CLOEXEC));
    ActivatedDaemon daemon(home, file.get(), "1");
    const auto status = daemon.ended_within(std::chrono::seconds(20));
    REQUIRE(status.has_value());
    INFO("pyboxd's log: " << daemon.log());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) != 0);
    CHECK_THAT(daemon.log(), Catch::Contains("(fd 3) is not a socket"));
    CHECK_FALSE(fs::exists(home / "pyboxd.sock"));  // it did not fall back to binding a socket itself
}
