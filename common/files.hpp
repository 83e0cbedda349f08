// Small file helpers: whole-file reads with a size cap, crash-safe writes, advisory locks, and a
// folder held open for writes that stay inside it.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

namespace pybox {

// Reads a whole file; fails with "file_missing" when it does not exist and "too_large" when it
// holds more than max_bytes.
Expected<std::string> read_file_capped(const std::filesystem::path& file, std::size_t max_bytes);

// The same for a file that must be a regular file: anything else (a folder, FIFO, socket or
// device, or a symbolic link unless `follow_link`) fails with "file_unreadable" without blocking
// on it or reading from it.
Expected<std::string> read_regular_file_capped(const std::filesystem::path& file, std::size_t max_bytes,
                                               bool follow_link);

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

// A folder held open (one O_DIRECTORY fd, closed with the object; move-only), and calls on the
// entries of it that never follow a symbolic link: writes through it land inside it even when
// someone puts links in it. An entry name is one path part (no '/'). Errors are
// "file_unwritable" (or, from open, "file_missing"/"file_unreadable") with a sentence naming the
// path; nothing is left behind by a call that fails.
class Folder {
public:
    // Opens `path`, following links in it (the caller named it).
    static Expected<Folder> open(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return m_path; }

    enum class EntryKind { missing, regular_file, folder, symbolic_link, other };
    // What the entry is, the link itself for a link; `missing` also when it cannot be looked at.
    EntryKind entry_kind(const std::string& name) const;

    // The sub-folder `name`, made first (mode 0755 less the umask) when missing. Fails when the
    // entry is a symbolic link or not a folder.
    Expected<Folder> open_or_make_folder(const std::string& name) const;

    // Writes `bytes` to a new file of an unused random name "<prefix><12 hex><suffix>" (mode
    // 0644 less the umask) and returns the name.
    Expected<std::string> write_new_file(std::string_view prefix, std::string_view suffix,
                                         std::string_view bytes) const;

    // Renames entry `from` to `to`. With `replace`, an entry `to` is replaced as rename(2) does
    // (a link is replaced, not followed; a folder is not); without, an existing `to` is left as
    // it is and the answer is false.
    Expected<bool> rename_entry(const std::string& from, const std::string& to, bool replace) const;

    // Removes the file entry `name`, if it can.
    void remove_file(const std::string& name) const noexcept;

    Folder(Folder&& other) noexcept;
    Folder& operator=(Folder&& other) noexcept;
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;
    ~Folder();

private:
    Folder(int fd, std::filesystem::path path) : m_fd(fd), m_path(std::move(path)) {}
    int m_fd = -1;
    std::filesystem::path m_path;
};

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
