// The JSON of a request body (POST /v1/runs, POST /v1/setup), parsed strictly from untrusted
// bytes by util::parse_json_strictly: one JSON value nested at most 8 levels, nothing after it,
// no object that repeats a key, doubles read correctly rounded (the receipt's signature depends
// on it). Pure.
#pragma once

#include "common/api_error_codes.hpp"
#include "common/error.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace pybox::proto {

// Error codes: "invalid_json" (not one well-formed JSON value, too deep, bytes after it) and
// "invalid_request" (a repeated key, named in the message).
Expected<boost::json::value> parse_request_json(std::string_view body);
// The error of a request whose JSON does not have the request's shape: "invalid_request".
inline Error invalid_request(std::string message) { return make_error(api_error::k_invalid_request, std::move(message)); }

}  // namespace pybox::proto
