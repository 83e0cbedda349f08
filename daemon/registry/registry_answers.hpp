// The strict readers of what a registry answers, and of the engine's account of a pull from one
// (its progress stream, its inspect answer of what it pulled): untrusted bytes, bounded by the
// caller's body limits, fuzzed. Pure.
#pragma once

#include "common/error.hpp"
#include "daemon/registry/pinned_reference.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace pybox::registry {

inline constexpr std::size_t k_max_location_bytes = 4'096;

// The distribution API's error body ({"errors": [{"code", "message", "detail"}]}) as one line for
// a message: "CODE: message; CODE: message", each excerpt printable and short; empty when the
// body is not such a document.
std::string describe_registry_errors(std::string_view body);

// The request target of an upload's next step from its Location header: an absolute path
// ("/v2/..."), or an absolute http:// URL whose authority is `authority` (a registry may name
// itself): the path and query of it. Anything else ("registry_protocol"): a registry must not
// send the upload elsewhere.
Expected<std::string> upload_target(std::string_view location, std::string_view authority);

// `target` with "digest=DIGEST" added to its query.
std::string with_digest_query(std::string_view target, std::string_view digest);

// The engine's progress stream of a pull (POST /images/create?fromImage=...): JSON objects, one a
// line. The first "error" ends the pull (the engine answers 200 before it knows); the
// "Digest: sha256:..." status names what it pulled. A line that is not a JSON object:
// "engine_protocol".
struct PullProgress {
    std::optional<std::string> error;   // the engine's words, printable
    std::optional<std::string> digest;  // "sha256:..."
};
Expected<PullProgress> read_pull_progress(std::string_view text);

// "image_digest_mismatch": what was pulled as `reference` is not what its digest names.
Error digest_mismatch(const PinnedReference& reference, std::string_view what);
// Whether the engine's words say it refused bytes for not matching their digest.
bool is_verification_failure(std::string_view message);

struct PulledImage {
    std::string image_id;   // "sha256:..." as the engine holds it
    std::string reference;  // the RepoDigests entry checked
};

// The engine's inspect answer of a pulled reference: its RepoDigests must hold exactly
// `reference`, and its ID must be `expected_image_id` when given; else a digest mismatch. An
// answer without an image ID or RepoDigests list: "engine_protocol".
Expected<PulledImage> check_pulled_image(const boost::json::value& inspected, const PinnedReference& reference,
                                         const std::optional<std::string>& expected_image_id);

}  // namespace pybox::registry
