#include "common/file_facts.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>

namespace pybox {

std::optional<FileFacts> file_facts(const std::filesystem::path& path)
{
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
    FileFacts facts;
    facts.mode = static_cast<unsigned>(info.st_mode) & 07777u;
    facts.uid = static_cast<unsigned>(info.st_uid);
    facts.gid = static_cast<unsigned>(info.st_gid);
    if (S_ISREG(info.st_mode)) {
        facts.kind = FileFacts::Kind::regular_file;
    } else if (S_ISDIR(info.st_mode)) {
        facts.kind = FileFacts::Kind::folder;
    } else if (S_ISLNK(info.st_mode)) {
        facts.kind = FileFacts::Kind::symbolic_link;
        std::array<char, 4096> target{};
        const auto length = ::readlink(path.c_str(), target.data(), target.size());
        if (length <= 0 || static_cast<std::size_t>(length) >= target.size()) return std::nullopt;
        facts.link_target = std::filesystem::path(std::string(target.data(), static_cast<std::size_t>(length)));
    }
    return facts;
}

std::optional<FileStamp> file_stamp(const std::filesystem::path& path)
{
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
#if defined(__APPLE__)
    const struct timespec changed = info.st_ctimespec;
#else
    const struct timespec changed = info.st_ctim;
#endif
    return FileStamp{static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
                     static_cast<std::uint64_t>(info.st_size),
                     static_cast<std::int64_t>(changed.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(changed.tv_nsec)};
}

}  // namespace pybox
