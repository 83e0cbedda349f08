// The version of every PyBox program (pybox, pyboxd, the receipt's identity.daemon_version):
// the release number from project(VERSION ...) in the top CMakeLists.txt, plus the git revision
// of the source tree it was built from. The revision is read at every build (revision.cmake),
// not only when CMake configures, so a build after a new commit or an edit names it.
#pragma once

#include <string>
#include <string_view>

namespace pybox {

// "0.1.0": project(VERSION ...), and nowhere else.
std::string_view version_number();

// The short commit hash ("c0b8f2b"), with "-dirty" when tracked files differ from that commit,
// or "unknown" when the sources are not a git checkout (a release tarball).
std::string_view revision();

// "0.1.0+c0b8f2b", "0.1.0+c0b8f2b-dirty" or "0.1.0+unknown" (semver build metadata).
const std::string& version();

}  // namespace pybox
