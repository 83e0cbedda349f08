// Where the tests find the source tree and what the build made. The paths are compiled into one
// file (build_paths.cpp, from tests/CMakeLists.txt), not into every test file, so that a test
// file compiles the same in every checkout and a compiler cache can reuse it.
#pragma once

#include <filesystem>
#include <string>

namespace pybox::test {

std::filesystem::path source_dir();          // the checkout (docs/, daemon/, images/, ...)
std::filesystem::path generated_docs_dir();  // the man pages and completions the build generated
std::string client_path();                   // the built pybox
std::string daemon_path();                   // the built pyboxd

}  // namespace pybox::test
