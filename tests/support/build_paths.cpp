#include "tests/support/build_paths.hpp"

namespace pybox::test {

std::filesystem::path source_dir() { return PYBOX_SOURCE_DIR; }
std::filesystem::path generated_docs_dir() { return PYBOX_GENERATED_DOCS_DIR; }
std::string client_path() { return PYBOX_CLIENT_PATH; }
std::string daemon_path() { return PYBOXD_PATH; }

}  // namespace pybox::test
