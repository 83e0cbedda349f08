// The JSON of a request body (POST /v1/runs, POST /v1/setup), parsed strictly from untrusted
// bytes: one JSON value nested at most 8 levels, nothing after it, and no object that repeats a
// key (boost::json::parse keeps the last one silently). Doubles are read correctly rounded
// (std::from_chars), so a double written in its shortest form reads back as itself, which
// Boost 1.81's own parser does not promise (the receipt's signature depends on it). Pure.
#pragma once

#include "common/error.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pybox::proto {

// Error codes: "invalid_json" (not one well-formed JSON value, too deep, bytes after it) and
// "invalid_request" (a repeated key, named in the message).
Expected<boost::json::value> parse_request_json(std::string_view body);
// The error of a request whose JSON does not have the request's shape: "invalid_request".
inline Error invalid_request(std::string message) { return make_error("invalid_request", std::move(message)); }

// The same rules for other untrusted JSON text (the model service's answers), nested at most
// `max_depth` levels; the caller words the failure. On failure `problem` is a phrase ("it is
// nested deeper than 16 levels") or `duplicate_key` names the repeated key, and `at_byte` says
// where the reading stopped.
struct StrictJson {
    boost::json::value value;
    std::optional<std::string> duplicate_key;
    std::string problem;
    std::size_t at_byte = 0;
    bool ok() const { return !duplicate_key && problem.empty(); }
};
StrictJson parse_json_strictly(std::string_view text, std::size_t max_depth);

}  // namespace pybox::proto
