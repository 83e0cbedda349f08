// Files that a run moves in and out of its box (`pybox exec --in PATH --out DIR`): their names,
// the checks every side applies to them (the client before sending, the daemon on the request,
// the daemon again on what the box's helper reports, the client before writing), and the caps
// of common/limits.hpp. Pure.
//
// A name is a relative path inside the box's working folder: UTF-8, 1 to 255 bytes, parts
// separated by single '/', no part empty, "." or "..", no control bytes (NUL, newline, ...),
// no leading '/'. In one set of files no name repeats and no name is also a folder of another
// ("a" beside "a/b").
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

// Inside the box: inputs appear under the working folder (the program's current directory),
// and what the program leaves in the output folder comes back.
inline constexpr std::string_view k_box_working_folder = "/tmp/work";
inline constexpr std::string_view k_box_output_folder = "/tmp/work/out";
// The output folder's name inside the working folder: no input may be named "out" or "out/...".
inline constexpr std::string_view k_output_folder_name = "out";
// True for "out" and "out/...": an input there would hide the output folder.
bool is_in_output_folder(std::string_view name);

struct FileContent {
    std::string name;
    std::string bytes;
    bool operator==(const FileContent&) const = default;
};

// Why `name` cannot name a file ("" when it can): one sentence naming the rule it breaks.
std::string file_name_problem(std::string_view name);

// Checks a whole set: every name valid, none repeated, none a folder of another, at most
// `max_files` files and `max_bytes` bytes in all. Errors name the first file at fault, with
// `code` ("input_files_invalid" for inputs).
struct FileSetCaps {
    std::size_t max_files = 0;
    std::size_t max_bytes = 0;
};
Expected<void> check_file_set(const std::vector<FileContent>& files, FileSetCaps caps, std::string_view code,
                              std::string_view what);

}  // namespace pybox::proto
