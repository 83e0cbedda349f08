// The JSON of a request body (POST /v1/runs, POST /v1/setup), parsed strictly from untrusted
// bytes: one JSON value nested at most 8 levels, nothing after it, and no object that repeats a
// key (boost::json::parse keeps the last one silently). Pure.
#pragma once

#include "common/error.hpp"

#include <boost/json/value.hpp>

#include <string_view>

namespace pybox::proto {

// Error codes: "invalid_json" (not one well-formed JSON value, too deep, bytes after it) and
// "invalid_request" (a repeated key, named in the message).
Expected<boost::json::value> parse_request_json(std::string_view body);

}  // namespace pybox::proto
