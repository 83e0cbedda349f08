#include "common/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace pybox {

namespace {

std::string errno_text() { return std::strerror(errno); }

class Fd {
public:
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() { if (m_fd >= 0) ::close(m_fd); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }
    int release() { return std::exchange(m_fd, -1); }

private:
    int m_fd;
};

}  // namespace

Expected<std::string> read_file_capped(const std::filesystem::path& file, std::size_t max_bytes)
{
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT)
            return make_error("file_missing", file.string() + " does not exist.");
        return make_error("file_unreadable", "Cannot read " + file.string() + ": " + errno_text() + ".");
    }
    std::string bytes;
    char buffer[64 * 1024];
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR) continue;
            return make_error("file_unreadable", "Reading " + file.string() + " failed: " + errno_text() + ".");
        }
        if (got == 0) break;
        if (bytes.size() + static_cast<std::size_t>(got) > max_bytes)
            return make_error("too_large", file.string() + " is larger than " + std::to_string(max_bytes) + " bytes.");
        bytes.append(buffer, static_cast<std::size_t>(got));
    }
    return bytes;
}

Expected<void> write_file_atomic(const std::filesystem::path& file, std::string_view bytes, unsigned mode)
{
    const std::filesystem::path temporary = file.string() + ".tmp." + std::to_string(::getpid());
    Fd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                 static_cast<mode_t>(mode)));
    if (fd.get() < 0)
        return make_error("file_unwritable", "Cannot write " + temporary.string() + ": " + errno_text() + ".");
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t put = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
        if (put < 0) {
            if (errno == EINTR) continue;
            const std::string why = errno_text();
            ::unlink(temporary.c_str());
            return make_error("file_unwritable", "Writing " + temporary.string() + " failed: " + why + ".");
        }
        written += static_cast<std::size_t>(put);
    }
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0 || ::fsync(fd.get()) != 0) {
        const std::string why = errno_text();
        ::unlink(temporary.c_str());
        return make_error("file_unwritable", "Syncing " + temporary.string() + " failed: " + why + ".");
    }
    ::close(fd.release());
    if (::rename(temporary.c_str(), file.c_str()) != 0) {
        const std::string why = errno_text();
        ::unlink(temporary.c_str());
        return make_error("file_unwritable", "Cannot replace " + file.string() + ": " + why + ".");
    }
    return {};
}

Expected<void> sync_folder(const std::filesystem::path& folder)
{
    Fd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0)
        return make_error("file_unwritable", "Cannot sync the folder " + folder.string() + ": " + errno_text() + ".");
    return {};
}

Expected<void> append_line_synced(const std::filesystem::path& file, std::string_view line)
{
    const bool existed = ::access(file.c_str(), F_OK) == 0;
    Fd fd(::open(file.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd.get() < 0)
        return make_error("file_unwritable", "Cannot open " + file.string() + " to append: " + errno_text() + ".");
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
        return make_error("file_unwritable", "Cannot read the size of " + file.string() + ": " + errno_text() + ".");
    std::string bytes;
    char last = '\n';
    if (status.st_size > 0 && ::pread(fd.get(), &last, 1, status.st_size - 1) != 1)
        return make_error("file_unwritable", "Cannot read the end of " + file.string() + ": " + errno_text() + ".");
    if (last != '\n') bytes += '\n';
    bytes.append(line);
    bytes += '\n';
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t put = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
        if (put < 0) {
            if (errno == EINTR) continue;
            return make_error("file_unwritable", "Appending to " + file.string() + " failed: " + errno_text() + ".");
        }
        written += static_cast<std::size_t>(put);
    }
    if (::fsync(fd.get()) != 0)
        return make_error("file_unwritable", "Syncing " + file.string() + " failed: " + errno_text() + ".");
    if (!existed) return sync_folder(file.parent_path());
    return {};
}

Expected<FileTail> read_file_tail(const std::filesystem::path& file, std::size_t max_bytes)
{
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) return make_error("file_missing", file.string() + " does not exist.");
        return make_error("file_unreadable", "Cannot read " + file.string() + ": " + errno_text() + ".");
    }
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
        return make_error("file_unreadable", "Cannot read the size of " + file.string() + ": " + errno_text() + ".");
    const auto size = static_cast<std::size_t>(status.st_size);
    FileTail tail;
    tail.cut = size > max_bytes;
    const auto start = static_cast<off_t>(tail.cut ? size - max_bytes : 0);
    tail.bytes.resize(std::min(size, max_bytes));
    std::size_t got = 0;
    while (got < tail.bytes.size()) {
        const ssize_t read = ::pread(fd.get(), tail.bytes.data() + got, tail.bytes.size() - got,
                                     start + static_cast<off_t>(got));
        if (read < 0 && errno == EINTR) continue;
        if (read < 0)
            return make_error("file_unreadable", "Reading " + file.string() + " failed: " + errno_text() + ".");
        if (read == 0) break;  // the file shrank meanwhile
        got += static_cast<std::size_t>(read);
    }
    tail.bytes.resize(got);
    return tail;
}

namespace {

// Opens (creating if needed) and flocks the file; returns the owning fd.
Expected<int> lock_file(const std::filesystem::path& file, bool wait)
{
    Fd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd.get() < 0)
        return make_error("lock_unavailable", "Cannot open " + file.string() + ": " + errno_text() + ".");
    int result;
    do {
        result = ::flock(fd.get(), LOCK_EX | (wait ? 0 : LOCK_NB));
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
        if (errno == EWOULDBLOCK)
            return make_error("lock_busy", file.string() + " is held by another process.");
        return make_error("lock_unavailable", "Cannot lock " + file.string() + ": " + errno_text() + ".");
    }
    return fd.release();
}

}  // namespace

Expected<FileLock> FileLock::try_acquire(const std::filesystem::path& file)
{
    auto fd = lock_file(file, false);
    if (!fd) return fd.error();
    return FileLock(*fd);
}

Expected<FileLock> FileLock::acquire(const std::filesystem::path& file)
{
    auto fd = lock_file(file, true);
    if (!fd) return fd.error();
    return FileLock(*fd);
}

FileLock::FileLock(FileLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

FileLock::~FileLock()
{
    if (m_fd >= 0) ::close(m_fd);
}

}  // namespace pybox
