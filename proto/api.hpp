// The client <-> daemon API (HTTP/1.1 + JSON over ~/.pybox/runtime/pyboxd.sock).
// docs/api.md is the reference; this header names the shared constants and error shape.
#pragma once

#include "common/error.hpp"

#include <string>
#include <string_view>

namespace pybox::proto {

inline constexpr std::string_view k_api_version = "v1";
inline constexpr std::string_view k_host = "pybox";

// Error bodies: {"error": {"code": "...", "message": "...", "retryable": bool}}.
std::string error_body(const Error& error, bool retryable);
// Reads an error body; falls back to the raw text when it is not one.
Error parse_error_body(unsigned http_status, std::string_view body);

}  // namespace pybox::proto
