// When a model call is tried again, and after how long. Pure; unit-tested.
//
// Only an answer of 429 (too many requests) or 5xx is tried again, at most k_max_tries in all.
// The wait is the answer's Retry-After when it has a usable one (seconds, or an HTTP date), else
// k_backoff_first doubling per failed try up to k_backoff_longest. A Retry-After above
// k_max_retry_after ends the call at once. 401 and 403 (the key was refused) and every other
// status are never tried again, nor are connection, TLS and timeout failures (a timed-out
// answer may still have been generated and billed).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::model {

// The wait a Retry-After value asks for: "120" (delay-seconds, at most 9 digits) or an
// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") counted from `now` (0 when past). nullopt for
// anything else, and then the backoff applies.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value,
                                                      std::chrono::system_clock::time_point now);

// The backoff after `failed_tries` (1 or more) failed tries in a row.
std::chrono::milliseconds backoff_delay(int failed_tries);

// Whether an answer's status may be tried again at all.
bool is_retried_status(unsigned status);

struct RetryPlan {
    bool again = false;
    std::chrono::milliseconds wait{0};
    std::string why_not;  // when !again: a phrase for the error message
};

// What to do after try number `tries_done` (1 or more) was answered `status`.
RetryPlan plan_retry(unsigned status, int tries_done, std::optional<std::chrono::seconds> retry_after);

}  // namespace pybox::model
