// Takes an image into an engine by its pinned digest and checks what the engine got: the
// engine pulls REF@sha256:DIGEST (POST /images/create?fromImage=...; the engine checks the
// manifest and every blob against their digests as it pulls), then PyBox inspects the image
// and requires that its RepoDigests hold exactly that reference and, when the caller knows it
// (an image PyBox pushed), that its ID is the recorded config digest (check_pulled_image). A registry that serves
// other bytes for the digest (tampered, or the wrong digest recorded) fails
// "image_digest_mismatch" with the engine's words or the difference, and the reference is
// removed from the engine again, so nothing is left under it. Never a tag, never at run time.
//
// Used for a cluster's images (the node's engine pulls what push_image pushed) and by `pybox
// setup` for config.json's stdlib_image: on macOS, where no image can be built, the seed's
// pinned Docker Hub image (pinned_reference.hpp's k_seed_stdlib_image) by default
// (daemon/images/image_service.hpp). The pull has the timeout given, the inspect
// limits::k_inspect_timeout. Failures also: the engine's (engine_client.hpp), "registry_error"
// (the engine could not pull for another reason, quoted), "image_reference_invalid".
// Runs on the caller's executor; the engine client must outlive the call.
#pragma once

#include "common/error.hpp"
#include "daemon/registry/pinned_reference.hpp"
#include "daemon/registry/registry_answers.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace pybox::engine {
class EngineClient;
}

namespace pybox::registry {

inline constexpr std::chrono::minutes k_pull_timeout{10};

boost::asio::awaitable<Expected<PulledImage>> pull_pinned_image(engine::EngineClient& engine,
                                                                const PinnedReference& reference,
                                                                std::optional<std::string> expected_image_id,
                                                                std::chrono::milliseconds timeout);

}  // namespace pybox::registry
