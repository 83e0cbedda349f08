// Untrusted JSON text parsed strictly: one JSON value nested at most `max_depth` levels,
// nothing after it, and no object that repeats a key (boost::json::parse keeps the last one
// silently). Doubles are read correctly rounded (std::from_chars), so a double written in its
// shortest form reads back as itself, which Boost 1.81's own parser does not promise (a
// signature over the canonical form depends on it). The caller words the failure. Pure.
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::util {

// On failure `problem` is a phrase ("it is nested deeper than 16 levels") or `duplicate_key`
// names the repeated key, and `at_byte` says where the reading stopped. A number beyond a
// double's range is refused with `number_too_large` set as well as `problem`: the text is JSON,
// but the value has no canonical form, which a verifier words differently from broken text.
struct StrictJson {
    boost::json::value value;
    std::optional<std::string> duplicate_key;
    std::string problem;
    bool number_too_large = false;
    std::size_t at_byte = 0;
    bool ok() const { return !duplicate_key && problem.empty(); }
    // Why the text was refused, as what follows its subject in a sentence: "repeats the key
    // \"K\"" (the untrusted key as a printable excerpt) or "is not JSON: <problem>". Only when !ok().
    std::string refusal() const;
};
StrictJson parse_json_strictly(std::string_view text, std::size_t max_depth);

}  // namespace pybox::util
