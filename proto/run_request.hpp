// RunRequest: the body of `POST /v1/runs`, parsed strictly from untrusted JSON.
//
// Accepted keys: "source" (string, required, <= 65,536 bytes of UTF-8), "timeout_s" (number,
// 0.1-30, default 2), "image" (string, a known image, default "stdlib"), "output_limit_bytes"
// (integer 1-65,536, default 65,536). Any other key, a wrong type, duplicate keys, or a body
// that is not one JSON object is refused with a RequestError naming the field. Nothing in a
// request can change the box policy.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace pybox::proto {

struct RunRequest {
    std::string source;
    double timeout_s = 2.0;
    std::string image = "stdlib";
    std::size_t output_limit_bytes = 65'536;
};

// Error codes: "invalid_json", "invalid_request" (shape, unknown key, wrong type),
// "source_too_large", "timeout_out_of_range", "output_limit_out_of_range", "unknown_image".
Expected<RunRequest> parse_run_request(std::string_view body);
// Range checks shared by the client (before sending) and the daemon.
Expected<void> validate_run_request(const RunRequest& request);
std::string serialize_run_request(const RunRequest& request);

}  // namespace pybox::proto
