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
//
// ValidRunRequest is a request that passed these checks, with the box policy of its image: only
// the functions below make one, so what holds one (the daemon's run pipeline) never checks it
// again or looks the policy up a second time.
#pragma once

#include "common/error.hpp"
#include "proto/box_policy.hpp"
#include "proto/files.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <utility>
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

    friend bool operator==(const RunRequest&, const RunRequest&) = default;
};

class ValidRunRequest {
public:
    const RunRequest& request() const { return m_request; }
    // The image's policy; a run that moves files gets the larger /tmp (limits::k_files_tmpfs_bytes).
    const BoxPolicy& policy() const { return m_policy; }
    RunRequest release() && { return std::move(m_request); }
    // The same request with another program (a repair step's), whose source is checked as a
    // request's is: "source_too_large", "invalid_request" (not UTF-8).
    Expected<ValidRunRequest> with_source(std::string source) const;

    friend bool operator==(const ValidRunRequest&, const ValidRunRequest&) = default;

private:
    ValidRunRequest(RunRequest request, BoxPolicy policy) : m_request(std::move(request)), m_policy(std::move(policy)) {}
    friend Expected<ValidRunRequest> validated_run_request(RunRequest request);

    RunRequest m_request;
    BoxPolicy m_policy;
};

// Error codes: "invalid_json", "invalid_request" (shape, unknown key, wrong type),
// "source_too_large", "timeout_out_of_range", "output_limit_out_of_range", "unknown_image",
// "input_files_invalid".
Expected<ValidRunRequest> parse_run_request(std::string_view body);
// The same for a document already parsed by parse_request_json (a repair request's run).
Expected<ValidRunRequest> run_request_from_json(const boost::json::value& document);
// The range checks, shared by the client (before sending) and the parsers; the deadline is kept
// to the millisecond.
Expected<ValidRunRequest> validated_run_request(RunRequest request);
std::string serialize_run_request(const RunRequest& request);

}  // namespace pybox::proto
