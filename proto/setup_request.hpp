// SetupRequest: the body of `POST /v1/setup`, parsed strictly from untrusted JSON.
//
// Accepted keys, both optional: "images" (a non-empty array of known image names, default
// ["stdlib"]; repeated names are kept once) and "refresh_lock" (bool, default false). An empty
// body means {}. Any other key, a repeated key, a wrong type, or a body that is not one JSON
// object is refused with "invalid_json", "invalid_request" or "unknown_image". Pure.
#pragma once

#include "common/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

struct SetupRequest {
    std::vector<std::string> images;
    bool refresh_lock = false;
};

Expected<SetupRequest> parse_setup_request(std::string_view body);
// The body `pybox setup` sends; no "images" key when `images` is empty (the daemon's default).
std::string serialize_setup_request(const SetupRequest& request);

}  // namespace pybox::proto
