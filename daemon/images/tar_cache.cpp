#include "daemon/images/tar_cache.hpp"

#include <algorithm>
#include <system_error>
#include <utility>
#include <vector>

namespace pybox::images {

std::filesystem::path cached_tar_file(const std::filesystem::path& cache_dir, const std::string& name,
                                      const std::string& recipe_sha)
{
    return cache_dir / (name + "-" + recipe_sha + ".tar");
}

bool keep_in_cache(const std::filesystem::path& tar, const std::filesystem::path& cache_dir, const std::string& name,
                   const std::string& recipe_sha)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(cache_dir, ec);
    const fs::path target = cached_tar_file(cache_dir, name, recipe_sha);
    const fs::path partial = target.string() + ".partial";
    fs::copy_file(tar, partial, fs::copy_options::overwrite_existing, ec);
    if (!ec) {
        fs::permissions(partial, fs::perms::owner_read | fs::perms::owner_write, ec);
    }
    if (!ec) {
        fs::rename(partial, target, ec);
    }
    if (ec) {
        fs::remove(partial, ec);
        return false;
    }
    std::vector<std::pair<fs::file_time_type, fs::path>> older;
    for (const auto& entry : fs::directory_iterator(cache_dir, ec)) {
        const std::string file = entry.path().filename().string();
        if (file.starts_with(name + "-") && file.ends_with(".tar") && entry.path() != target &&
            file.size() == name.size() + 1 + 64 + 4) {
            std::error_code unknown_time;
            older.emplace_back(entry.last_write_time(unknown_time), entry.path());
        }
    }
    std::sort(older.begin(), older.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 1; i < older.size(); ++i) {
        std::error_code ignored;
        fs::remove(older[i].second, ignored);
    }
    return true;
}

}  // namespace pybox::images
