// RunRequest: the body of `POST /v1/runs`, parsed strictly from untrusted JSON.
//
// Accepted keys: "source" (string, required, <= 65,536 bytes of UTF-8), "timeout_s" (number,
// 0.1-30, default 2, kept to the millisecond), "image" (string: "stdlib", "data" or a valid
// own-image name, default "stdlib"; whether an own image exists is checked before the run),
// "output_limit_bytes"
// (integer 1-65,536, default 65,536), "files" (object, for runs that move files: "inputs", an
// array of {"name", "base64"} within proto/files.hpp's rules and caps, not named "out"; and
// "outputs", a boolean: bring back what the program leaves in the output folder). Any other key, a wrong type, duplicate keys, or a body
// that is not one JSON object is refused with a RequestError naming the field. Nothing in a
// request can change the box policy.
#pragma once

#include "common/error.hpp"
#include "proto/files.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

struct RunRequest {
    std::string source;
    double timeout_s = 2.0;
    std::string image = "stdlib";
    std::size_t output_limit_bytes = 65'536;
    // Present for runs that move files: they run under the files helper with a larger /tmp.
    struct Files {
        std::vector<FileContent> inputs;
        bool outputs = false;
        bool operator==(const Files&) const = default;
    };
    std::optional<Files> files;
};

// Error codes: "invalid_json", "invalid_request" (shape, unknown key, wrong type),
// "source_too_large", "timeout_out_of_range", "output_limit_out_of_range", "unknown_image",
// "input_files_invalid".
Expected<RunRequest> parse_run_request(std::string_view body);
// The same for a document already parsed by parse_request_json (a repair request's run).
Expected<RunRequest> run_request_from_json(const boost::json::value& document);
// Range checks shared by the client (before sending) and the daemon.
Expected<void> validate_run_request(const RunRequest& request);
std::string serialize_run_request(const RunRequest& request);

}  // namespace pybox::proto
