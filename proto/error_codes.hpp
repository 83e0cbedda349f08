// The one table of the error codes the socket API answers (docs/api.md, "Errors"): for each,
// the HTTP status, whether the same request may succeed if simply retried later, and a one-line
// meaning. Statuses come from this table alone, never from a code's spelling; each code is a
// constant of common/api_error_codes.hpp, which its makers and readers name. docs/api.md holds
// the same table and tests/unit/api_docs_test.cpp keeps the two equal; the same test requires
// every code the daemon, proto/ and common/ can make to be either in this table or on the
// test's short list of codes that never reach an answer (startup failures, the client's own).
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string_view>

namespace pybox::proto {

struct ApiErrorCode {
    std::string_view code;
    unsigned http_status;
    bool retryable;
    std::string_view meaning;
};

// Every row, in the order docs/api.md lists them.
std::span<const ApiErrorCode> api_error_codes();
// The row of `code`, or nullptr when the API never answers it.
const ApiErrorCode* find_api_error_code(std::string_view code);
// The Retry-After of an answer with `code`: set for the codes that mean the daemon is full for
// now (busy, too_many_connections), nullopt for every other.
std::optional<std::chrono::seconds> retry_after_for(std::string_view code);

}  // namespace pybox::proto
