#include "common/private_file.hpp"

#include "common/api_error_codes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pybox {

namespace {

class OpenFile {
public:
    explicit OpenFile(int fd) : m_fd(fd) {}
    ~OpenFile()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

}  // namespace

std::string private_file_problem(bool regular_file, unsigned mode, bool owned_by_us)
{
    if (!regular_file) return "it is not a regular file";
    if (!owned_by_us) return "it belongs to another user";
    if ((mode & 077) != 0) {
        char octal[8];
        std::snprintf(octal, sizeof octal, "%04o", mode & 07777);
        return std::string("group or others may access it (mode ") + octal + "); make it private with chmod 600";
    }
    return "";
}

Expected<std::string> read_private_file(const std::filesystem::path& file, std::size_t max_bytes)
{
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    OpenFile fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) {
        const int error = errno;
        if (error == ENOENT) return make_error(api_error::k_file_missing, file.string() + " does not exist.");
        return make_error(api_error::k_file_unreadable, "Cannot open " + file.string() + ": " + std::strerror(error) + ".");
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0)
        return make_error(api_error::k_file_unreadable, "Cannot look at " + file.string() + ": " + std::strerror(errno) + ".");
    const auto problem = private_file_problem(S_ISREG(info.st_mode), static_cast<unsigned>(info.st_mode) & 07777u,
                                              info.st_uid == ::geteuid());
    if (!problem.empty()) return make_error(api_error::k_file_not_private, file.string() + " is refused: " + problem + ".");
    std::string bytes;
    char buffer[4096];
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            return make_error(api_error::k_file_unreadable, "Reading " + file.string() + " failed: " + std::strerror(errno) + ".");
        if (got == 0) return bytes;
        if (bytes.size() + static_cast<std::size_t>(got) > max_bytes)
            return make_error(api_error::k_too_large, file.string() + " holds more than " + std::to_string(max_bytes) + " bytes.");
        bytes.append(buffer, static_cast<std::size_t>(got));
    }
}

}  // namespace pybox
