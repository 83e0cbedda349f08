// Small file helpers: whole-file reads with a size cap, crash-safe writes, advisory locks.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace pybox {

// Reads a whole file; fails with "file_missing" when it does not exist and "too_large" when it
// holds more than max_bytes.
Expected<std::string> read_file_capped(const std::filesystem::path& file, std::size_t max_bytes);

// Writes to a temporary file beside the target, fsyncs it, then renames it over the target.
// The file is created with `mode` (default 0600).
Expected<void> write_file_atomic(const std::filesystem::path& file, std::string_view bytes,
                                 unsigned mode = 0600);

// Appends `line` and a newline to a file (created with mode 0600 when missing), then fsyncs the
// file, and its folder when the file was new. When the file's last byte is not a newline (a write
// a crash cut short), a newline goes first, so the cut line stays a line of its own.
Expected<void> append_line_synced(const std::filesystem::path& file, std::string_view line);

// fsync(2) of a folder, so that names created, renamed or deleted in it survive a crash.
Expected<void> sync_folder(const std::filesystem::path& folder);

// The last `max_bytes` of a file at most; `cut` says whether earlier bytes were left unread.
// Fails with "file_missing" when the file does not exist.
struct FileTail {
    std::string bytes;
    bool cut = false;
};
Expected<FileTail> read_file_tail(const std::filesystem::path& file, std::size_t max_bytes);

// An exclusive flock(2) held for the lifetime of the object. Move-only.
class FileLock {
public:
    // Fails with "lock_busy" instead of waiting when another process holds it.
    static Expected<FileLock> try_acquire(const std::filesystem::path& file);
    // Waits for the lock (use only off the event loop).
    static Expected<FileLock> acquire(const std::filesystem::path& file);
    FileLock(FileLock&& other) noexcept;
    FileLock& operator=(FileLock&& other) noexcept;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    ~FileLock();

private:
    explicit FileLock(int fd) : m_fd(fd) {}
    int m_fd = -1;
};

}  // namespace pybox
