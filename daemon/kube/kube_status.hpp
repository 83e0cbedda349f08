// The apiserver's account of a failed call: its `Status` object (kind "Status": status,
// reason, message, code, details.causes) read from an answer's body, and the Error a client
// call returns for an answer that is not 2xx. Pure.
//
// Errors keep the engine's codes (common/api_errors.def), since the cluster is the engine of
// its runs: 404 is "engine_no_such_object", every other refusal "engine_error"; the sentence
// names the call, the status and the apiserver's reason and message, so a 403 says which verb on
// which resource the user may not use, a 409 whether the object exists already or changed, a
// 422 which field is invalid. Callers that act on the reason (a 409 AlreadyExists that is fine)
// read KubeStatus.
#pragma once

#include "common/error.hpp"

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::kube {

struct KubeStatus {
    std::string status;               // "Failure" (or "Success")
    std::string reason;               // "Forbidden", "NotFound", "AlreadyExists", "Conflict", "Invalid", ... or ""
    std::string message;              // the apiserver's sentence, or ""
    unsigned code = 0;                // the HTTP status it states, or 0
    std::vector<std::string> causes;  // details.causes as "field: message", for 422 Invalid
};

// The Status in `body`, or nullopt when the body is not one (not JSON, not kind "Status", a
// field of the wrong type). Keys it does not know are ignored, as an API client must.
std::optional<KubeStatus> parse_kube_status(std::string_view body);
// The same of a JSON value already parsed (a watch's ERROR event carries its Status as its object).
std::optional<KubeStatus> read_kube_status(const boost::json::value& value);

// The Error for an answer with HTTP status `http_status` (not 2xx) and `body`, for the call
// `what` ("POST /api/v1/namespaces/ns/pods").
Error status_error(std::string_view what, unsigned http_status, std::string_view body);

}  // namespace pybox::kube
