#include "common/files.hpp"

#include "common/api_error_codes.hpp"
#include "common/ids.hpp"
#include "common/posix.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace pybox {

namespace {

// Reads the open file to its end, failing with "too_large" as soon as it holds more than
// max_bytes (so no more than max_bytes and one buffer are ever read).
Expected<std::string> read_open_file_capped(const UniqueFd& fd, const std::filesystem::path& file, std::size_t max_bytes)
{
    std::string bytes;
    char buffer[64 * 1024];
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR) continue;
            return make_error(api_error::k_file_unreadable, "Reading " + file.string() + " failed: " + errno_text(errno) + ".");
        }
        if (got == 0) break;
        if (bytes.size() + static_cast<std::size_t>(got) > max_bytes)
            return make_error(api_error::k_too_large, file.string() + " is larger than " + std::to_string(max_bytes) + " bytes.");
        bytes.append(buffer, static_cast<std::size_t>(got));
    }
    return bytes;
}

Error open_failed(const std::filesystem::path& file)
{
    if (errno == ENOENT) return make_error(api_error::k_file_missing, file.string() + " does not exist.");
    return make_error(api_error::k_file_unreadable, "Cannot read " + file.string() + ": " + errno_text(errno) + ".");
}

}  // namespace

Expected<std::string> read_file_capped(const std::filesystem::path& file, std::size_t max_bytes)
{
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return open_failed(file);
    return read_open_file_capped(fd, file, max_bytes);
}

Expected<std::string> read_regular_file_capped(const std::filesystem::path& file, std::size_t max_bytes,
                                               bool follow_link)
{
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_link ? 0 : O_NOFOLLOW)));
    if (fd.get() < 0 && errno == ELOOP && !follow_link)
        return make_error(api_error::k_file_unreadable, file.string() + " is a symbolic link, which is not followed here.");
    if (fd.get() < 0) return open_failed(file);
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
        return make_error(api_error::k_file_unreadable, "Cannot look at " + file.string() + ": " + errno_text(errno) + ".");
    if (!S_ISREG(status.st_mode)) return make_error(api_error::k_file_unreadable, file.string() + " is not a regular file.");
    return read_open_file_capped(fd, file, max_bytes);
}

Expected<void> write_file_atomic(const std::filesystem::path& file, std::string_view bytes, unsigned mode)
{
    const std::filesystem::path temporary = file.string() + ".tmp." + std::to_string(::getpid());
    UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                 static_cast<mode_t>(mode)));
    if (fd.get() < 0)
        return make_error(api_error::k_file_unwritable, "Cannot write " + temporary.string() + ": " + errno_text(errno) + ".");
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t put = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
        if (put < 0) {
            if (errno == EINTR) continue;
            const std::string why = errno_text(errno);
            ::unlink(temporary.c_str());
            return make_error(api_error::k_file_unwritable, "Writing " + temporary.string() + " failed: " + why + ".");
        }
        written += static_cast<std::size_t>(put);
    }
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0 || ::fsync(fd.get()) != 0) {
        const std::string why = errno_text(errno);
        ::unlink(temporary.c_str());
        return make_error(api_error::k_file_unwritable, "Syncing " + temporary.string() + " failed: " + why + ".");
    }
    ::close(fd.release());
    if (::rename(temporary.c_str(), file.c_str()) != 0) {
        const std::string why = errno_text(errno);
        ::unlink(temporary.c_str());
        return make_error(api_error::k_file_unwritable, "Cannot replace " + file.string() + ": " + why + ".");
    }
    return {};
}

Expected<void> sync_folder(const std::filesystem::path& folder)
{
    UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0)
        return make_error(api_error::k_file_unwritable, "Cannot sync the folder " + folder.string() + ": " + errno_text(errno) + ".");
    return {};
}

Expected<void> append_line_synced(const std::filesystem::path& file, std::string_view line)
{
    const bool existed = ::access(file.c_str(), F_OK) == 0;
    UniqueFd fd(::open(file.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd.get() < 0)
        return make_error(api_error::k_file_unwritable, "Cannot open " + file.string() + " to append: " + errno_text(errno) + ".");
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
        return make_error(api_error::k_file_unwritable, "Cannot read the size of " + file.string() + ": " + errno_text(errno) + ".");
    std::string bytes;
    char last = '\n';
    if (status.st_size > 0 && ::pread(fd.get(), &last, 1, status.st_size - 1) != 1)
        return make_error(api_error::k_file_unwritable, "Cannot read the end of " + file.string() + ": " + errno_text(errno) + ".");
    if (last != '\n') bytes += '\n';
    bytes.append(line);
    bytes += '\n';
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t put = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
        if (put < 0) {
            if (errno == EINTR) continue;
            return make_error(api_error::k_file_unwritable, "Appending to " + file.string() + " failed: " + errno_text(errno) + ".");
        }
        written += static_cast<std::size_t>(put);
    }
    if (::fsync(fd.get()) != 0)
        return make_error(api_error::k_file_unwritable, "Syncing " + file.string() + " failed: " + errno_text(errno) + ".");
    if (!existed) return sync_folder(file.parent_path());
    return {};
}

Expected<FileTail> read_file_tail(const std::filesystem::path& file, std::size_t max_bytes)
{
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) return make_error(api_error::k_file_missing, file.string() + " does not exist.");
        return make_error(api_error::k_file_unreadable, "Cannot read " + file.string() + ": " + errno_text(errno) + ".");
    }
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
        return make_error(api_error::k_file_unreadable, "Cannot read the size of " + file.string() + ": " + errno_text(errno) + ".");
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
            return make_error(api_error::k_file_unreadable, "Reading " + file.string() + " failed: " + errno_text(errno) + ".");
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
    UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd.get() < 0)
        return make_error(api_error::k_lock_unavailable, "Cannot open " + file.string() + ": " + errno_text(errno) + ".");
    int result;
    do {
        result = ::flock(fd.get(), LOCK_EX | (wait ? 0 : LOCK_NB));
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
        if (errno == EWOULDBLOCK)
            return make_error(api_error::k_lock_busy, file.string() + " is held by another process.");
        return make_error(api_error::k_lock_unavailable, "Cannot lock " + file.string() + ": " + errno_text(errno) + ".");
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

Expected<Folder> Folder::open(const std::filesystem::path& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == ENOTDIR) return make_error(api_error::k_file_unreadable, path.string() + " is not a folder.");
    if (fd < 0) return open_failed(path);
    return Folder(fd, path);
}

Folder::EntryKind Folder::entry_kind(const std::string& name) const
{
    struct stat status {};
    if (::fstatat(m_fd, name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) return EntryKind::missing;
    if (S_ISREG(status.st_mode)) return EntryKind::regular_file;
    if (S_ISDIR(status.st_mode)) return EntryKind::folder;
    if (S_ISLNK(status.st_mode)) return EntryKind::symbolic_link;
    return EntryKind::other;
}

Expected<Folder> Folder::open_or_make_folder(const std::string& name) const
{
    const std::filesystem::path path = m_path / name;
    if (::mkdirat(m_fd, name.c_str(), 0755) != 0 && errno != EEXIST)
        return make_error(api_error::k_file_unwritable, "Cannot make the folder " + path.string() + ": " + errno_text(errno) + ".");
    const int fd = ::openat(m_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
        // Linux says ENOTDIR for a link here too; tell the two apart for the message.
        if (entry_kind(name) == EntryKind::symbolic_link)
            return make_error(api_error::k_file_unwritable, path.string() + " is a symbolic link, which is not followed.");
        return make_error(api_error::k_file_unwritable, path.string() + " is not a folder.");
    }
    if (fd < 0) return make_error(api_error::k_file_unwritable, "Cannot open the folder " + path.string() + ": " + errno_text(errno) + ".");
    return Folder(fd, path);
}

Expected<std::string> Folder::write_new_file(std::string_view prefix, std::string_view suffix,
                                             std::string_view bytes) const
{
    std::string name;
    int created = -1;
    // 48 random bits: a name already taken is all but impossible, and retried.
    for (int attempt = 0; attempt < 8; ++attempt) {
        name = std::string(prefix) + random_id_128().substr(0, 12) + std::string(suffix);
        created = ::openat(m_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (created >= 0 || errno != EEXIST) break;
    }
    UniqueFd fd(created);
    if (fd.get() < 0)
        return make_error(api_error::k_file_unwritable, "Cannot create a file in " + m_path.string() + ": " + errno_text(errno) + ".");
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t put = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) {
            const std::string why = errno_text(errno);
            remove_file(name);
            return make_error(api_error::k_file_unwritable, "Writing a file in " + m_path.string() + " failed: " + why + ".");
        }
        written += static_cast<std::size_t>(put);
    }
    if (::close(fd.release()) != 0) {
        const std::string why = errno_text(errno);
        remove_file(name);
        return make_error(api_error::k_file_unwritable, "Writing a file in " + m_path.string() + " failed: " + why + ".");
    }
    return name;
}

Expected<bool> Folder::rename_entry(const std::string& from, const std::string& to, bool replace) const
{
    const auto failed = [&] {
        return make_error(api_error::k_file_unwritable, "Cannot rename a file to " + (m_path / to).string() + ": " + errno_text(errno) + ".");
    };
    if (replace) {
        if (::renameat(m_fd, from.c_str(), m_fd, to.c_str()) != 0) return failed();
        return true;
    }
    if (::renameat2(m_fd, from.c_str(), m_fd, to.c_str(), RENAME_NOREPLACE) == 0) return true;
    if (errno == EEXIST) return false;
    if (errno != EINVAL && errno != ENOSYS) return failed();
    // A file system without RENAME_NOREPLACE: a hard link is never made over an existing name.
    if (::linkat(m_fd, from.c_str(), m_fd, to.c_str(), 0) != 0) {
        if (errno == EEXIST) return false;
        return failed();
    }
    remove_file(from);
    return true;
}

void Folder::remove_file(const std::string& name) const noexcept
{
    ::unlinkat(m_fd, name.c_str(), 0);
}

Folder::Folder(Folder&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)) {}

Folder& Folder::operator=(Folder&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = std::exchange(other.m_fd, -1);
        m_path = std::move(other.m_path);
    }
    return *this;
}

Folder::~Folder()
{
    if (m_fd >= 0) ::close(m_fd);
}

}  // namespace pybox
