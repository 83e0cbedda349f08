#include "client/files_in.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "common/limits.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <string>
#include <system_error>
#include <utility>

namespace pybox::client {

namespace {

namespace fs = std::filesystem;

// A file to send: the name it gets in the box and where it is read from.
struct InputSource {
    std::string name;
    fs::path path;
    bool in_folder = false;  // found inside a named folder: a link there is never followed
};

std::string shown(const fs::path& path)
{
    return "\"" + util::printable_excerpt(path.string(), 200) + "\"";
}

Error invalid(std::string message)
{
    return make_error(api_error::k_input_files_invalid, std::move(message));
}

std::string kind_of(fs::file_type type)
{
    switch (type) {
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    default: return "neither a regular file nor a folder";
    }
}

// Counts before anything is read: the file past the cap is refused as soon as it is found.
Expected<void> add_source(std::vector<InputSource>& sources, InputSource source)
{
    if (sources.size() == limits::k_max_input_files) {
        return invalid("At most " + std::to_string(limits::k_max_input_files) + " input files are allowed; " +
                       shown(source.path) + " would be one more.");
    }
    sources.push_back(std::move(source));
    return {};
}

// The name a folder is sent under: its base name as written, or its real one when the path ends
// in ".", ".." or "/", so that no name holds "." or "..".
Expected<std::string> folder_name(const fs::path& path)
{
    fs::path normal = path.lexically_normal();
    if (!normal.has_filename()) {
        normal = normal.parent_path();
    }
    std::string name = normal.filename().string();
    if (name.empty() || name == "." || name == "..") {
        std::error_code error;
        const fs::path real = fs::canonical(path, error);
        if (error) {
            return make_error(api_error::k_file_unreadable, "Cannot find the real name of the input folder " + shown(path) + ": " +
                                                     error.message() + ".");
        }
        name = real.filename().string();
    }
    if (name.empty()) {
        return invalid("The input " + shown(path) + " is the root folder, which has no name; name the folders in it.");
    }
    return name;
}

// Adds every regular file under `folder`, which is sent as `name`; `top` is the folder the user
// named. Entries are visited in name order, so the same tree always fails the same way.
Expected<void> add_folder(const fs::path& folder, const std::string& name, const fs::path& top,
                          std::vector<InputSource>& sources)
{
    std::error_code error;
    std::vector<fs::directory_entry> entries;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        entries.push_back(*it);
    }
    if (error) {
        return make_error(api_error::k_file_unreadable, "Cannot list the input folder " + shown(folder) + ": " + error.message() + ".");
    }
    std::sort(entries.begin(), entries.end(), [](const fs::directory_entry& a, const fs::directory_entry& b) {
        return a.path().filename().string() < b.path().filename().string();
    });
    for (const fs::directory_entry& entry : entries) {
        const std::string entry_name = name + "/" + entry.path().filename().string();
        const fs::file_type type = entry.symlink_status(error).type();
        if (error) {
            return make_error(api_error::k_file_unreadable, "Cannot look at " + shown(entry.path()) + ": " + error.message() + ".");
        }
        Expected<void> added;
        if (type == fs::file_type::regular) {
            added = add_source(sources, {entry_name, entry.path(), true});
        } else if (type == fs::file_type::directory) {
            added = add_folder(entry.path(), entry_name, top, sources);
        } else {
            added = invalid("The input folder " + shown(top) + " holds " + shown(entry.path()) + ", " + kind_of(type) +
                            "; only regular files and folders are sent and links inside a folder are not followed: "
                            "remove it, or name what it points to with its own --in.");
        }
        if (!added) {
            return added;
        }
    }
    return {};
}

Expected<void> add_path(const fs::path& path, std::vector<InputSource>& sources)
{
    std::error_code error;
    const fs::file_type type = fs::status(path, error).type();  // follows a link: the user named it
    if (type == fs::file_type::not_found) {
        return make_error(api_error::k_file_missing, "The input " + shown(path) + " does not exist.");
    }
    if (error) {
        return make_error(api_error::k_file_unreadable, "Cannot look at the input " + shown(path) + ": " + error.message() + ".");
    }
    if (type == fs::file_type::regular) {
        return add_source(sources, {path.filename().string(), path, false});
    }
    if (type != fs::file_type::directory) {
        return invalid("The input " + shown(path) + " is " + kind_of(type) + "; name a regular file or a folder.");
    }
    auto name = folder_name(path);
    if (!name) {
        return name.error();
    }
    const std::size_t first = sources.size();
    if (auto added = add_folder(path, *name, path, sources); !added) {
        return added;
    }
    std::sort(sources.begin() + static_cast<std::ptrdiff_t>(first), sources.end(),
              [](const InputSource& a, const InputSource& b) { return a.name < b.name; });
    return {};
}

// The rules on names, checked before any byte is read.
Expected<void> check_input_names(const std::vector<proto::FileContent>& files)
{
    auto checked = proto::check_file_set(files, {limits::k_max_input_files, limits::k_max_input_bytes},
                                         api_error::k_input_files_invalid, "input");
    if (!checked) {
        return checked;
    }
    for (const proto::FileContent& file : files) {
        if (proto::is_in_output_folder(file.name)) {
            return invalid("input \"" + util::printable_excerpt(file.name, 80) + "\": \"" +
                           std::string(proto::k_output_folder_name) +
                           "\" is the output folder inside the box; rename the input.");
        }
    }
    return {};
}

}  // namespace

Expected<std::vector<proto::FileContent>> collect_input_files(const std::vector<std::filesystem::path>& paths)
{
    std::vector<InputSource> sources;
    for (const fs::path& path : paths) {
        if (auto added = add_path(path, sources); !added) {
            return added.error();
        }
    }
    std::vector<proto::FileContent> files;
    files.reserve(sources.size());
    for (const InputSource& source : sources) {
        files.push_back({source.name, {}});
    }
    if (auto checked = check_input_names(files); !checked) {
        return checked.error();
    }
    std::size_t total = 0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        auto bytes = read_regular_file_capped(sources[i].path, limits::k_max_input_bytes - total, !sources[i].in_folder);
        if (!bytes && bytes.error().code == api_error::k_too_large) {
            return invalid("The input files hold more than " + std::to_string(limits::k_max_input_bytes) +
                           " bytes in all, the most a run takes; reading stopped at " + shown(sources[i].path) + ".");
        }
        if (!bytes) {
            return bytes.error();
        }
        total += bytes->size();
        files[i].bytes = std::move(*bytes);
    }
    return files;
}

}  // namespace pybox::client
