#include "daemon/registry/registry_answers.hpp"

#include "common/api_error_codes.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <boost/json/value.hpp>

#include <algorithm>

namespace pybox::registry {

namespace {

constexpr std::size_t k_max_answer_depth = 16;
constexpr std::size_t k_max_errors_shown = 4;
constexpr std::size_t k_excerpt_bytes = 200;

const boost::json::string* string_at(const boost::json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    return value == nullptr ? nullptr : value->if_string();
}

}  // namespace

std::string describe_registry_errors(std::string_view body)
{
    const auto parsed = util::parse_json_strictly(body, k_max_answer_depth);
    const auto* document = parsed.ok() ? parsed.value.if_object() : nullptr;
    const auto* errors_value = document == nullptr ? nullptr : document->if_contains("errors");
    const auto* errors = errors_value == nullptr ? nullptr : errors_value->if_array();
    if (errors == nullptr) return {};
    std::string text;
    std::size_t shown = 0;
    for (const auto& entry : *errors) {
        const auto* object = entry.if_object();
        if (object == nullptr) return {};
        const auto* code = string_at(*object, "code");
        const auto* message = string_at(*object, "message");
        if (code == nullptr) return {};
        if (shown++ == k_max_errors_shown) {
            text += "; ...";
            break;
        }
        if (!text.empty()) text += "; ";
        text += util::printable_excerpt(*code, k_excerpt_bytes);
        if (message != nullptr) text += ": " + util::printable_excerpt(*message, k_excerpt_bytes);
    }
    return text;
}

Expected<std::string> upload_target(std::string_view location, std::string_view authority)
{
    const auto refuse = [&](std::string_view why) -> Error {
        return make_error(api_error::k_registry_protocol, "The registry's upload Location \"" +
                                                              util::printable_excerpt(location, 128) + "\" " +
                                                              std::string(why) + ".");
    };
    if (location.empty() || location.size() > k_max_location_bytes) return refuse("is empty or too long");
    for (const char c : location) {
        if (c < 0x21 || c > 0x7e) return refuse("holds a byte that is not printable ASCII");
    }
    std::string_view target = location;
    if (target.starts_with("http://")) {
        target.remove_prefix(7);
        const auto slash = target.find('/');
        if (slash == std::string_view::npos || target.substr(0, slash) != authority)
            return refuse("names another server than " + std::string(authority));
        target.remove_prefix(slash);
    }
    if (!target.starts_with("/v2/")) return refuse("is not a path under /v2/ on this registry");
    if (target.find('#') != std::string_view::npos) return refuse("holds a fragment");
    return std::string(target);
}

std::string with_digest_query(std::string_view target, std::string_view digest)
{
    // A digest is "sha256:" and hex: ':' may stand in a query unescaped (RFC 3986).
    return std::string(target) + (target.find('?') == std::string_view::npos ? "?" : "&") + "digest=" +
           std::string(digest);
}

Expected<PullProgress> read_pull_progress(std::string_view text)
{
    constexpr std::string_view k_digest_status = "Digest: ";
    PullProgress progress;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto end = rest.find('\n');
        const std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        const auto parsed = util::parse_json_strictly(line, k_max_answer_depth);
        const auto* event = parsed.ok() ? parsed.value.if_object() : nullptr;
        if (event == nullptr)
            return make_error(api_error::k_engine_protocol,
                              "The engine's pull progress holds a line that is not a JSON object: \"" +
                                  util::printable_excerpt(line) + "\".");
        if (const auto* error = event->if_contains("error"); error != nullptr && !progress.error) {
            progress.error = util::printable_excerpt(error->is_string() ? std::string_view(error->get_string())
                                                                         : std::string_view("(no message)"),
                                                     k_excerpt_bytes);
        }
        if (const auto* status = string_at(*event, "status"); status != nullptr && status->starts_with(k_digest_status)) {
            const std::string_view digest = std::string_view(*status).substr(k_digest_status.size());
            if (!is_sha256_digest(digest))
                return make_error(api_error::k_engine_protocol, "The engine's pull progress names a digest that is not one: \"" +
                                                                    util::printable_excerpt(digest) + "\".");
            progress.digest = std::string(digest);
        }
    }
    return progress;
}

Error digest_mismatch(const PinnedReference& reference, std::string_view what)
{
    return make_error(api_error::k_image_digest_mismatch, "The image pulled as " + reference.text() +
                                                              " is not what that digest names (tampered or wrong "
                                                              "digest): " + std::string(what) + ".");
}

bool is_verification_failure(std::string_view message)
{
    return message.find("verification failed") != std::string_view::npos ||
           message.find("digest did not match") != std::string_view::npos ||
           message.find("does not match") != std::string_view::npos;
}

Expected<PulledImage> check_pulled_image(const boost::json::value& inspected, const PinnedReference& reference,
                                         const std::optional<std::string>& expected_image_id)
{
    const auto* object = inspected.if_object();
    const auto* id = object == nullptr ? nullptr : string_at(*object, "Id");
    if (id == nullptr || !is_sha256_digest(*id))
        return make_error(api_error::k_engine_protocol, "The engine's inspect answer of " + reference.text() +
                                                            " names no image ID.");
    const auto* digests_value = object->if_contains("RepoDigests");
    const auto* digests = digests_value == nullptr ? nullptr : digests_value->if_array();
    if (digests == nullptr)
        return make_error(api_error::k_engine_protocol, "The engine's inspect answer of " + reference.text() +
                                                            " has no RepoDigests list.");
    PulledImage pulled{std::string(*id), reference.text()};
    const bool found = std::any_of(digests->begin(), digests->end(), [&](const boost::json::value& digest) {
        return digest.is_string() && digest.get_string() == pulled.reference;
    });
    if (!found) return digest_mismatch(reference, "the engine's RepoDigests do not hold it");
    if (expected_image_id && pulled.image_id != *expected_image_id)
        return digest_mismatch(reference, "the engine holds it as image " + pulled.image_id + ", and the record says " +
                                              *expected_image_id);
    return pulled;
}

}  // namespace pybox::registry
