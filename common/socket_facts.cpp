#include "common/socket_facts.hpp"

#include "common/api_error_codes.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace pybox {

namespace {

Error invalid(int fd, const std::string& what)
{
    return make_error(api_error::k_socket_activation_invalid,
                      "The socket handed over by the service manager (fd " + std::to_string(fd) + ") " + what + ".");
}

// An int socket option, or nullopt with errno set.
std::optional<int> int_option(int fd, int option)
{
    int value = 0;
    socklen_t length = sizeof value;
    if (::getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0) return std::nullopt;
    return value;
}

}  // namespace

Expected<std::filesystem::path> adopt_listening_unix_socket(int fd)
{
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0) return invalid(fd, "is not open");
    const auto type = int_option(fd, SO_TYPE);
    if (!type && errno == ENOTSOCK) return invalid(fd, "is not a socket");
    if (!type) return invalid(fd, std::string("cannot be looked at: ") + std::strerror(errno));
    if (*type != SOCK_STREAM) return invalid(fd, "is not a stream socket (ListenStream= in the .socket unit)");
    sockaddr_un address{};
    socklen_t length = sizeof address;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
        return invalid(fd, std::string("has no address: ") + std::strerror(errno));
    if (address.sun_family != AF_UNIX) return invalid(fd, "is not a unix socket (ListenStream= must name a path)");
    const auto listening = int_option(fd, SO_ACCEPTCONN);
    if (!listening || *listening == 0) return invalid(fd, "is not listening");
    if (::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0)
        return invalid(fd, std::string("cannot be made close-on-exec: ") + std::strerror(errno));
    const auto path_bytes = length > offsetof(sockaddr_un, sun_path) ? length - offsetof(sockaddr_un, sun_path) : 0;
    if (path_bytes == 0 || address.sun_path[0] == '\0') return std::filesystem::path();
    return std::filesystem::path(std::string(address.sun_path, ::strnlen(address.sun_path, path_bytes)));
}

}  // namespace pybox
