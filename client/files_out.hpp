// The output files of `pybox exec --out DIR [--force]`: the client writes what the box left in
// its output folder into DIR on the user's disk (the daemon never does).
//
// check_output_folder runs before the run, so that a run is not wasted on a folder its files
// cannot go to. write_output_files runs after it; the names come from an untrusted box and are
// checked again here. Neither ever writes outside DIR: DIR is opened once (following a link
// there: the user named it) and every folder below it is opened without following links. Both
// touch the disk; render_output_report is pure.
#pragma once

#include "common/error.hpp"
#include "proto/files.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace pybox::client {

// DIR exists, is a folder (or a link to one) and this user can create files in it: proven by
// creating and removing a file of a fresh name. Fails with "output_folder_invalid", naming DIR
// and what is wrong. Leaves nothing behind.
Expected<void> check_output_folder(const std::filesystem::path& dir);

// What became of one output file.
struct OutputFileResult {
    enum class Outcome { written, kept_existing, failed };
    std::string name;       // as the box named it (untrusted: show it with util::printable_excerpt)
    Outcome outcome = Outcome::failed;
    std::size_t bytes = 0;  // written: how many
    std::string reason;     // failed: one sentence
    bool operator==(const OutputFileResult&) const = default;
};

struct OutputWriteReport {
    std::vector<OutputFileResult> files;  // one per output, in the order given
    bool any_failed() const;
};

// Writes each output to DIR/<name>, making its folders as needed (mode 0755 less the umask). A
// file is written under a temporary name (".pybox-<random>.tmp", mode 0644 less the umask) in its
// folder and renamed to its name, so a name never holds half a file and no temporary file is
// left, whatever fails. An output fails (and the others still go) when its name breaks
// proto::file_name_problem, a folder on its way is a link or not a folder, its name is taken by
// a folder, link or anything but a regular file, or the disk refuses. A regular file already at
// the name is kept unless `force`, which replaces it.
OutputWriteReport write_output_files(const std::filesystem::path& dir, const std::vector<proto::FileContent>& outputs,
                                     bool force);

// One line per output for stderr, each ending in '\n':
//   "pybox: wrote DIR/NAME (N bytes)"
//   "pybox: kept existing DIR/NAME: use --force to replace it"
//   "pybox: could not write DIR/NAME: REASON"
// Names and reasons are shown with util::printable_excerpt (they may come from the box).
std::string render_output_report(const std::filesystem::path& dir, const OutputWriteReport& report);

}  // namespace pybox::client
