// How proto/'s readers of PyBox's own documents (the receipt, the API's answers) treat what
// they do not know. docs/api.md "Versioning" says what a client may meet within v1.
#pragma once

namespace pybox::proto {

enum class ReadMode {
    strict,    // a key or enum name this build does not know is refused: tests, fuzzing, saved documents
    tolerant,  // ignored, or kept as text: clients of a daemon that may be newer
};

}  // namespace pybox::proto
