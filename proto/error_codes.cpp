#include "proto/error_codes.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"

#include <algorithm>

namespace pybox::proto {

namespace {

// One row per line of common/api_errors.def, in its order.
constexpr ApiErrorCode k_codes[] = {
#define PYBOX_API_ERROR(code, http_status, retryable, meaning) {api_error::k_##code, http_status, retryable, meaning},
#include "common/api_errors.def"
#undef PYBOX_API_ERROR
};

}  // namespace

std::span<const ApiErrorCode> api_error_codes() { return k_codes; }

const ApiErrorCode* find_api_error_code(std::string_view code)
{
    const auto* found = std::find_if(std::begin(k_codes), std::end(k_codes),
                                     [&](const ApiErrorCode& row) { return row.code == code; });
    return found == std::end(k_codes) ? nullptr : found;
}

std::optional<std::chrono::seconds> retry_after_for(std::string_view code)
{
    if (code == api_error::k_busy || code == api_error::k_too_many_connections) return limits::k_busy_retry_after;
    return std::nullopt;
}

}  // namespace pybox::proto
