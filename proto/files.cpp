#include "proto/files.hpp"

#include "common/limits.hpp"
#include "util/text.hpp"

#include <set>

namespace pybox::proto {

std::string file_name_problem(std::string_view name)
{
    if (name.empty()) {
        return "A file name must not be empty.";
    }
    if (name.size() > limits::k_max_file_name_bytes) {
        return "A file name must be at most " + std::to_string(limits::k_max_file_name_bytes) + " bytes (got " +
               std::to_string(name.size()) + ").";
    }
    if (!util::is_valid_utf8(name)) {
        return "A file name must be UTF-8 text.";
    }
    for (const char c : name) {
        if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') {
            return "A file name must not hold control characters (NUL, newline, tab, ...).";
        }
    }
    if (name.front() == '/') {
        return "A file name must be relative to the working folder, not start with '/'.";
    }
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = name.find('/', start);
        const std::string_view part = name.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (part.empty()) {
            return "A file name must not hold an empty folder name ('//' or a trailing '/').";
        }
        if (part == "." || part == "..") {
            return "A file name must not hold '.' or '..' as a folder or file name.";
        }
        if (end == std::string_view::npos) {
            return "";
        }
        start = end + 1;
    }
}

bool is_in_output_folder(std::string_view name)
{
    return name.starts_with(k_output_folder_name) &&
           (name.size() == k_output_folder_name.size() || name[k_output_folder_name.size()] == '/');
}

Expected<void> check_file_set(const std::vector<FileContent>& files, FileSetCaps caps, std::string_view code,
                              std::string_view what)
{
    const std::string error_code(code);
    const auto named = [&](const std::string& name, const std::string& problem) {
        return make_error(error_code, std::string(what) + " \"" + util::printable_excerpt(name, 80) + "\": " + problem);
    };
    if (files.size() > caps.max_files) {
        return make_error(error_code, "At most " + std::to_string(caps.max_files) + " " + std::string(what) +
                                          " files are allowed (got " + std::to_string(files.size()) + ").");
    }
    std::size_t total = 0;
    std::set<std::string> names;
    for (const FileContent& file : files) {
        if (auto problem = file_name_problem(file.name); !problem.empty()) {
            return named(file.name, problem);
        }
        if (!names.insert(file.name).second) {
            return named(file.name, "The name appears twice.");
        }
        total += file.bytes.size();
    }
    // "a" beside "a/b": every folder prefix of every name must not be a name itself.
    for (const std::string& name : names) {
        for (std::size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
            if (names.contains(name.substr(0, slash))) {
                return named(name.substr(0, slash), "The name is also a folder of \"" + util::printable_excerpt(name, 80) + "\".");
            }
        }
    }
    if (total > caps.max_bytes) {
        return make_error(error_code, "The " + std::string(what) + " files hold " + std::to_string(total) +
                                          " bytes; at most " + std::to_string(caps.max_bytes) + " are allowed.");
    }
    return {};
}

}  // namespace pybox::proto
