#include "daemon/registry/image_pull.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/registry/registry_answers.hpp"

namespace pybox::registry {

boost::asio::awaitable<Expected<PulledImage>> pull_pinned_image(engine::EngineClient& engine,
                                                                const PinnedReference& reference,
                                                                std::optional<std::string> expected_image_id,
                                                                std::chrono::milliseconds timeout)
{
    const std::string text = reference.text();
    auto checked = co_await [&]() -> boost::asio::awaitable<Expected<PulledImage>> {
        auto progress_text = co_await engine.pull_image(text, timeout);
        if (!progress_text) {
            if (is_verification_failure(progress_text.error().message))
                co_return digest_mismatch(reference, progress_text.error().message);
            co_return progress_text.error();
        }
        auto progress = read_pull_progress(*progress_text);
        if (!progress) co_return progress.error();
        if (progress->error) {
            if (is_verification_failure(*progress->error)) co_return digest_mismatch(reference, *progress->error);
            co_return make_error(api_error::k_registry_error,
                                 "The engine could not pull " + text + ": " + *progress->error + ".");
        }
        if (progress->digest && *progress->digest != reference.digest)
            co_return digest_mismatch(reference, "the engine says it pulled " + *progress->digest);
        auto inspected = co_await engine.inspect_image(text, limits::k_inspect_timeout);
        if (!inspected) co_return inspected.error();
        co_return check_pulled_image(inspected->raw, reference, expected_image_id);
    }();
    if (!checked && checked.error().code == api_error::k_image_digest_mismatch) {
        // Only the reference is removed: an image the engine also holds under another name stays.
        (void)co_await engine.remove_image(text, limits::k_remove_timeout);
    }
    co_return checked;
}

}  // namespace pybox::registry
