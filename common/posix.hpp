// What every part that calls POSIX directly shares: the owner of one file descriptor, the C
// library's sentence for an errno value, the longest path a unix socket can bind to, and the
// longest path PyBox reads.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

namespace pybox {

// sockaddr_un.sun_path holds 108 bytes on Linux (104 on macOS, where the engines' sockets are
// PyBox's own, well inside either), one of them the terminating NUL.
inline constexpr std::size_t k_max_unix_socket_path = 107;
// The longest path PyBox takes from a file it reads (config.json): Linux's PATH_MAX.
inline constexpr std::size_t k_max_path_bytes = 4096;

// strerror's sentence for `error`, for a message such as "Cannot fork: <sentence>.".
inline std::string errno_text(int error) { return std::strerror(error); }

// Owns one file descriptor, closed when the object goes away (or at close()/reset()); -1 when
// it owns none.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : m_fd(fd) {}
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { close(); }

    int get() const { return m_fd; }
    int release() { return std::exchange(m_fd, -1); }
    void reset(int fd)
    {
        close();
        m_fd = fd;
    }
    void close()
    {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
    }

private:
    int m_fd = -1;
};

}  // namespace pybox
