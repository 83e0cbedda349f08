// The socket API's error table (docs/api.md, "Errors") as data: for each code an answer can
// carry, the HTTP status, whether the same request may succeed if simply retried later, and a
// one-line meaning. The rows are those of common/api_errors.def, the one place a code, its
// status and its meaning are written; statuses come from it alone, never from a code's spelling.
// tests/unit/api_docs_test.cpp keeps docs/api.md's table equal to it, and requires every code
// the daemon, proto/ and common/ can make to be either in it or in
// common/unanswered_errors.def (codes no answer carries: startup failures, the client's own).
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
