// The client <-> daemon API (HTTP/1.1 + JSON over ~/.pybox/runtime/pyboxd.sock).
// docs/api.md is the reference; this header names the shared constants; answers.hpp holds the
// answers' types, the error body among them.
#pragma once

#include "common/error.hpp"

#include <string>
#include <string_view>

namespace pybox::proto {

inline constexpr std::string_view k_api_version = "v1";
inline constexpr std::string_view k_host = "pybox";
// The header of a 200 answer of POST /v1/runs whose receipt the daemon signed (or tried to) but
// could not keep: one sentence saying why (docs/api.md "POST /v1/runs"). Absent when it was kept.
inline constexpr std::string_view k_receipt_not_kept_header = "PyBox-Receipt-Not-Kept";

// The error of a non-200 answer: its body read tolerantly as an ErrorAnswer, or, when it is not
// one, "http_<status>" quoting the raw text.
Error parse_error_body(unsigned http_status, std::string_view body);

}  // namespace pybox::proto
