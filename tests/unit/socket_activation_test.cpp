#include "common/socket_facts.hpp"
#include "daemon/server/socket_activation.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

using namespace pybox;
using namespace pybox::daemon;

namespace {

constexpr int k_our_pid = 4242;

Expected<std::optional<ActivatedSocket>> parse(std::optional<std::string> pid, std::optional<std::string> fds,
                                               std::optional<std::string> names = std::nullopt)
{
    return parse_socket_activation(ActivationEnvironment{std::move(pid), std::move(fds), std::move(names)}, k_our_pid);
}

std::string failure_of(std::optional<std::string> pid, std::optional<std::string> fds,
                       std::optional<std::string> names = std::nullopt)
{
    const auto parsed = parse(std::move(pid), std::move(fds), std::move(names));
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "socket_activation_invalid");
    return parsed.error().message;
}

bool not_activated(std::optional<std::string> pid, std::optional<std::string> fds)
{
    const auto parsed = parse(std::move(pid), std::move(fds));
    REQUIRE(parsed.has_value());
    return !parsed->has_value();
}

// A socket fd closed when the test case ends.
struct Fd {
    explicit Fd(int value) : fd(value) { REQUIRE(fd >= 0); }
    ~Fd() { ::close(fd); }
    int fd;
};

std::filesystem::path temporary_socket_path(const std::string& name)
{
    auto path = std::filesystem::temp_directory_path() / ("pybox-activation-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove(path);
    return path;
}

void bind_unix(int fd, const std::filesystem::path& path)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
}

std::string adopt_failure(int fd)
{
    const auto adopted = adopt_listening_unix_socket(fd);
    REQUIRE_FALSE(adopted.has_value());
    CHECK(adopted.error().code == "socket_activation_invalid");
    return adopted.error().message;
}

}  // namespace

TEST_CASE("Without LISTEN_FDS the daemon is not socket-activated")
{
    CHECK(not_activated(std::nullopt, std::nullopt));
    CHECK(not_activated(std::to_string(k_our_pid), std::nullopt));
}

TEST_CASE("LISTEN_FDS without LISTEN_PID is ignored, as sd_listen_fds ignores it")
{
    CHECK(not_activated(std::nullopt, "1"));
}

TEST_CASE("Sockets passed to another process are ignored")
{
    CHECK(not_activated("4241", "1"));
    CHECK(not_activated("1", "2"));
}

TEST_CASE("LISTEN_FDS=0 for this process means not activated")
{
    CHECK(not_activated(std::to_string(k_our_pid), "0"));
}

TEST_CASE("One socket for this process is fd 3")
{
    const auto parsed = parse(std::to_string(k_our_pid), "1");
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->has_value());
    CHECK((*parsed)->fd == 3);
    CHECK((*parsed)->name.empty());
}

TEST_CASE("LISTEN_FDNAMES gives the socket its name")
{
    const auto parsed = parse(std::to_string(k_our_pid), "1", "pyboxd.socket");
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->has_value());
    CHECK((*parsed)->name == "pyboxd.socket");
}

TEST_CASE("More than one socket is refused, naming the count and the unit setting")
{
    const auto message = failure_of(std::to_string(k_our_pid), "2");
    CHECK_THAT(message, Catch::Contains("passed 2 sockets") && Catch::Contains("ListenStream="));
}

TEST_CASE("A LISTEN_PID that is not a plain decimal pid is refused")
{
    for (const char* bad : {"", "abc", "-5", "+42", " 42", "42 ", "4.2", "0", "12345678901", "0x10"})
        CHECK_THAT(failure_of(bad, "1"), Catch::Contains("LISTEN_PID"));
}

TEST_CASE("A LISTEN_FDS that is not a plain decimal count is refused")
{
    for (const char* bad : {"", "one", "-1", "+1", "1 ", "1e0", "99999999999"})
        CHECK_THAT(failure_of(std::to_string(k_our_pid), bad), Catch::Contains("LISTEN_FDS"));
}

TEST_CASE("A refused value is quoted bounded, however long it is")
{
    const auto message = failure_of(std::string(10'000, '7'), "1");
    CHECK(message.size() < 200);
}

TEST_CASE("LISTEN_FDNAMES with more names than sockets is refused")
{
    CHECK_THAT(failure_of(std::to_string(k_our_pid), "1", "a:b"), Catch::Contains("LISTEN_FDNAMES"));
}

TEST_CASE("A LISTEN_FDNAMES name longer than 255 bytes is refused")
{
    CHECK_THAT(failure_of(std::to_string(k_our_pid), "1", std::string(256, 'n')), Catch::Contains("255 bytes"));
}

TEST_CASE("A listening unix stream socket is adopted with its path and made close-on-exec")
{
    const Fd socket(::socket(AF_UNIX, SOCK_STREAM, 0));
    const auto path = temporary_socket_path("listening");
    bind_unix(socket.fd, path);
    REQUIRE(::listen(socket.fd, 4) == 0);
    const auto adopted = adopt_listening_unix_socket(socket.fd);
    std::filesystem::remove(path);
    REQUIRE(adopted.has_value());
    CHECK(*adopted == path);
    CHECK((::fcntl(socket.fd, F_GETFD) & FD_CLOEXEC) != 0);
}

TEST_CASE("A closed fd is not adopted")
{
    const int fd = ::open("/dev/null", O_RDONLY);
    REQUIRE(fd >= 0);
    ::close(fd);
    CHECK_THAT(adopt_failure(fd), Catch::Contains("is not open"));
}

TEST_CASE("A regular file is not adopted as a socket")
{
    const Fd file(::open("/dev/null", O_RDONLY));
    CHECK_THAT(adopt_failure(file.fd), Catch::Contains("is not a socket"));
}

TEST_CASE("A datagram socket is not adopted")
{
    const Fd socket(::socket(AF_UNIX, SOCK_DGRAM, 0));
    CHECK_THAT(adopt_failure(socket.fd), Catch::Contains("is not a stream socket"));
}

TEST_CASE("A unix stream socket that is not listening is not adopted")
{
    const Fd socket(::socket(AF_UNIX, SOCK_STREAM, 0));
    const auto path = temporary_socket_path("bound");
    bind_unix(socket.fd, path);
    const auto message = adopt_failure(socket.fd);
    std::filesystem::remove(path);
    CHECK_THAT(message, Catch::Contains("is not listening"));
}

TEST_CASE("A listening TCP socket is not adopted")
{
    const Fd socket(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(socket.fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(socket.fd, 4) == 0);
    CHECK_THAT(adopt_failure(socket.fd), Catch::Contains("is not a unix socket"));
}
