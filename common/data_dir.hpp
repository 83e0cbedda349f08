// Where PyBox's read-only data (the image recipes and locks, images/) is found: next to the
// running program, <prefix>/bin/pyboxd -> <prefix>/share/pybox (the relative path comes from
// GNUInstallDirs at configure time), so an installed pyboxd never looks into the build machine's
// source or build tree. The build stages the same files under <build>/share/pybox, so a daemon
// run from the build tree and an installed one find their data the same way. No state: each
// call reads /proc/self/exe (Linux) or _NSGetExecutablePath (macOS).
#pragma once

#include "common/error.hpp"

#include <filesystem>

namespace pybox {

// The folder of the running program ("/usr/bin" for /usr/bin/pyboxd), symlinks resolved.
Expected<std::filesystem::path> own_program_dir();

// <own_program_dir>/../share/pybox, normalized ("/usr/share/pybox"). Does not check that it
// exists: see data_subdir.
Expected<std::filesystem::path> data_dir();

// data_dir()/name when it is a folder; otherwise the error "data_missing" names the path it
// looked at and the program it started from.
Expected<std::filesystem::path> data_subdir(const std::filesystem::path& name);

}  // namespace pybox
