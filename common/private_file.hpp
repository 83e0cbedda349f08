// Reading a secret from a file the way ssh reads a private key: the file (a link to it is
// followed, as the user named it) must be a regular file owned by this process's user, that
// neither group nor others may read, write or run (mode & 077 == 0). The checks are made on the
// opened file, so the file read is the file checked. Its contents never appear in an Error.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <filesystem>
#include <string>

namespace pybox {

// Why a file's facts make it unfit to hold a secret, or "" when they do not: `mode` is the
// permission bits (07777). Pure.
std::string private_file_problem(bool regular_file, unsigned mode, bool owned_by_us);

// The whole file, at most max_bytes. Errors: "file_missing", "file_not_private" (the sentence
// names the file, its mode and the fix), "file_unreadable", "too_large".
Expected<std::string> read_private_file(const std::filesystem::path& file, std::size_t max_bytes);

}  // namespace pybox
