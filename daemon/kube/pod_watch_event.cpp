#include "daemon/kube/pod_watch_event.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/kube/pod_state.hpp"
#include "util/strict_json.hpp"

#include <array>
#include <utility>

namespace pybox::kube {

namespace {

namespace json = boost::json;

constexpr std::array<std::pair<std::string_view, WatchEventType>, 5> k_event_types{{
    {"ADDED", WatchEventType::added},
    {"MODIFIED", WatchEventType::modified},
    {"DELETED", WatchEventType::deleted},
    {"BOOKMARK", WatchEventType::bookmark},
    {"ERROR", WatchEventType::error},
}};

Error refuse(const std::string& why)
{
    return make_error(api_error::k_engine_protocol, "An event of the apiserver's watch of a Pod " + why + ".");
}

std::optional<WatchEventType> event_type(const json::value& type)
{
    if (!type.is_string()) return std::nullopt;
    for (const auto& [name, value] : k_event_types)
        if (type.get_string() == name) return value;
    return std::nullopt;
}

// The object's metadata.resourceVersion when it is a Pod (kind "Pod") with one; empty otherwise.
std::string pod_version(const json::value& object)
{
    const auto* kind = object.get_object().if_contains("kind");
    if (kind == nullptr || *kind != "Pod") return {};
    return pod_facts(object).resource_version;
}

}  // namespace

Expected<PodWatchEvent> parse_pod_watch_event(std::string_view line)
{
    auto parsed = util::parse_json_strictly(line, k_max_watch_event_depth);
    if (!parsed.ok()) return refuse(parsed.refusal());
    auto* envelope = parsed.value.if_object();
    if (envelope == nullptr || envelope->size() != 2 || !envelope->contains("type") || !envelope->contains("object"))
        return refuse("is not an object of exactly \"type\" and \"object\"");
    const auto type = event_type(envelope->at("type"));
    if (!type) return refuse("has a type that is not ADDED, MODIFIED, DELETED, BOOKMARK or ERROR");
    json::value& object = envelope->at("object");
    if (!object.is_object()) return refuse("has an object that is not a JSON object");
    PodWatchEvent event;
    event.type = *type;
    if (*type == WatchEventType::error) {
        event.status = read_kube_status(object);
        if (!event.status) return refuse("of type ERROR has an object that is not a Status");
        return event;
    }
    event.resource_version = pod_version(object);
    if (event.resource_version.empty()) return refuse("has an object that is not a Pod with a resourceVersion");
    if (*type != WatchEventType::bookmark) {
        const auto facts = pod_facts(object);
        if (facts.uid.empty() || facts.name.empty()) return refuse("has a Pod without a name or a UID");
    }
    event.pod = std::move(object);
    return event;
}

}  // namespace pybox::kube
