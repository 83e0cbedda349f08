// The fixed prose of pybox(1) and pyboxd(8) around what their CLI11 definitions say:
// description, environment, files, exit status (from the client's exit code constants) and
// see also. Kept short; docs/ has the full story.
#pragma once

#include "packaging/docgen/cli_docs.hpp"

namespace pybox::docgen {

ManPage client_man_prose();
ManPage daemon_man_prose();

}  // namespace pybox::docgen
