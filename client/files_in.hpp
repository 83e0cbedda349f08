// The input files of `pybox exec --in PATH ...`: the client reads them from the user's disk
// (the daemon never does) and sends them in the run request (proto/files.hpp). Reads files;
// writes and creates nothing.
//
// Each PATH (in the order given) adds:
// - a regular file (a symbolic link on the command line is followed: the user named it): one
//   input named by the path's base name;
// - a folder: every regular file under it, recursively, named "<folder name>/<path inside it>"
//   with '/' between folders, sorted by name; the folder name is its real base name when the
//   path is "." or ends in "/" or "..". An empty folder adds nothing. Inside a folder no
//   symbolic link is followed: a link, FIFO, socket or device in it is refused.
//
// Errors (nothing is sent; every message names the path or input name and the rule):
// - "file_missing": a PATH does not exist (or a file vanished before it was read);
// - "file_unreadable": a PATH or a file in a folder cannot be looked at or read;
// - "input_files_invalid": everything about the set: a PATH or an entry of a folder that is not a
//   regular file or folder, more than limits::k_max_input_files files (counted before any is
//   read), more than limits::k_max_input_bytes bytes in all (reading stops there: a huge file
//   is never read whole), a name proto::check_file_set refuses (invalid, repeated, or a folder
//   of another), or a name that is the output folder "out" or inside it.
#pragma once

#include "common/error.hpp"
#include "proto/files.hpp"

#include <filesystem>
#include <vector>

namespace pybox::client {

Expected<std::vector<proto::FileContent>> collect_input_files(const std::vector<std::filesystem::path>& paths);

}  // namespace pybox::client
