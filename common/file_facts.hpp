// What the file system says about one path, without following a final symbolic link (lstat(2)
// and readlink(2)): the facts the checks of trusted binaries and folders decide on
// (daemon/macos/trusted_tools.hpp). Pure data plus one thin platform call.
#pragma once

#include <filesystem>
#include <optional>

namespace pybox {

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

}  // namespace pybox
