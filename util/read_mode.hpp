// How a reader of a JSON document (util/json_reader.hpp) treats what it does not know: the
// readers of a document written by a newer program are tolerant, those that must hold a
// document to exactly what this build knows are strict.
#pragma once

namespace pybox::util {

enum class ReadMode {
    strict,    // a key or enum name this build does not know is refused: tests, fuzzing, saved documents
    tolerant,  // ignored, or kept as text: readers of documents a newer program may have written
};

}  // namespace pybox::util
