// One event of the apiserver's watch of one Pod (GET .../pods?watch=1&fieldSelector=
// metadata.name%3DNAME&resourceVersion=RV): a line of the answer's body,
// {"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR", "object": {...}}. Pure.
//
// Read strictly, as untrusted bytes: one JSON object (parse_json_strictly: no repeated key,
// nothing after it, nested at most k_max_watch_event_depth) with exactly the keys "type" and
// "object"; a Pod event's object a Pod (kind "Pod") with a name, a UID and a resourceVersion; a
// BOOKMARK's a Pod with a resourceVersion; an ERROR's a Status (kube_status.hpp). Anything else is
// an "engine_protocol" Error naming why: the end wait then reads the Pod afresh. The Pod itself is
// read as pod_state.hpp reads a GET's answer (its fields tolerated as an API client must).
#pragma once

#include "common/error.hpp"
#include "daemon/kube/kube_status.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::kube {

// A Pod answer's own nesting (as kube_client.hpp allows an answer) and the event around it.
inline constexpr std::size_t k_max_watch_event_depth = 65;

enum class WatchEventType { added, modified, deleted, bookmark, error };

struct PodWatchEvent {
    WatchEventType type = WatchEventType::error;
    // ADDED, MODIFIED, DELETED: the Pod's version (DELETED: its last); BOOKMARK: the object as sent.
    boost::json::value pod;
    // Every type but ERROR: the object's metadata.resourceVersion, never empty.
    std::string resource_version;
    // ERROR: the apiserver's Status (410 Gone: the version asked for is older than the apiserver
    // keeps; the end wait reads the Pod afresh after any ERROR).
    std::optional<KubeStatus> status;
};

Expected<PodWatchEvent> parse_pod_watch_event(std::string_view line);

}  // namespace pybox::kube
