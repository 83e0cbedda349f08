// Takes an image into an engine by its pinned digest and checks what the engine got: the
// engine pulls REF@sha256:DIGEST (POST /images/create?fromImage=...; the engine checks the
// manifest and every blob against their digests as it pulls), then PyBox inspects the image
// and requires that its RepoDigests hold exactly that reference and, when the caller knows it
// (an image PyBox pushed), that its ID is the recorded config digest (check_pulled_image). A registry that serves
// other bytes for the digest (tampered, or the wrong digest recorded) fails
// "image_digest_mismatch" with the engine's words or the difference, and the reference is
// removed from the engine again, so nothing is left under it. Never a tag, never at run time.
//
// Used for a cluster's images (the node's engine pulls what push_image pushed) and for macOS,
// where `pybox setup` cannot build the stdlib image and takes the seed's pinned Docker Hub
// image instead (k_seed_stdlib_image). The pull has the timeout given, the inspect
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
#include <string_view>

namespace pybox::engine {
class EngineClient;
}

namespace pybox::registry {

// The stdlib image the seed pins for macOS (docs/reference.md's seed: Docker Hub's python,
// linux/arm64), taken by `pybox setup` where no image can be built.
inline constexpr std::string_view k_seed_stdlib_image =
    "python@sha256:70729b46c69b4f1e97c4822c1af3df53a1476cf5ddc6c087c0c10bc3a5678c2f";
inline constexpr std::chrono::minutes k_pull_timeout{10};

boost::asio::awaitable<Expected<PulledImage>> pull_pinned_image(engine::EngineClient& engine,
                                                                const PinnedReference& reference,
                                                                std::optional<std::string> expected_image_id,
                                                                std::chrono::milliseconds timeout);

// macOS's `pybox setup`: a pinned reference as text (k_seed_stdlib_image), parsed and pulled.
boost::asio::awaitable<Expected<PulledImage>> take_pinned_image(engine::EngineClient& engine,
                                                                std::string_view reference_text,
                                                                std::chrono::milliseconds timeout);

}  // namespace pybox::registry
