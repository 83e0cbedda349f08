// What the file system says about one path, without following a final symbolic link (lstat(2)
// and readlink(2)): the facts the checks of trusted binaries and folders decide on
// (daemon/macos/trusted_tools.hpp), and the stamp that tells whether a file changed since it was
// last read (daemon/records/receipt_store.hpp). Pure data plus one thin platform call.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace pybox {

// Which file a path names and its state: writing to it, renaming another over it or changing
// its owner or mode changes the stamp (its status-change time, ctime, cannot be set back by
// anyone but the clock's owner).
struct FileStamp {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::uint64_t size = 0;
    std::int64_t changed_ns = 0;  // ctime, nanoseconds since the epoch

    friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

struct FileFacts {
    enum class Kind { regular_file, folder, symbolic_link, other };
    Kind kind = Kind::other;
    unsigned mode = 0;  // the permission bits (07777)
    unsigned uid = 0;   // the owner
    unsigned gid = 0;   // the group
    std::optional<std::filesystem::path> link_target;  // for a symbolic link, as stored in it
};

// lstat(2) of `path` (and readlink(2) for a link); nullopt when it does not exist or cannot be
// looked at.
std::optional<FileFacts> file_facts(const std::filesystem::path& path);
// lstat(2) of `path`; nullopt as for file_facts().
std::optional<FileStamp> file_stamp(const std::filesystem::path& path);

}  // namespace pybox
