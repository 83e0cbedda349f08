// The typed facts of engine_facts.hpp read out of the apiserver's Pod answers: the box
// container's state from a Pod (GET .../pods/NAME, or a watch event's object), the Pod's own facts
// (phase, reason, node, UID, the container's image ID and why it waits), and the boxes of a
// PodList. A box's id is "<Pod name>/<Pod UID>" everywhere in PyBox: the name alone could be
// reused by a later Pod, the UID cannot. Pure.
//
// Read strictly: a field of an unexpected type (or a termination message beyond the kubelet's
// bound) makes the state "not reported" (inspect_pod), is
// left empty (pod_facts), or is an "engine_protocol" Error (listed_pods); never a guess, never a
// crash. The container's timestamps are RFC 3339 with 1 s resolution (the API's own).
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_facts.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::kube {

// The box container's state: reported once the Pod answer is well formed (a container not yet
// in the status reads "pending"); status "pending" (waiting, or no status yet), "running" or
// "exited" (terminated: exit_code, oom_killed when its reason is "OOMKilled", finished_at_ns);
// started_at_ns from the running or terminated state; no first_pid (the API names no host
// process). raw is the container's status object as the API gave it (null before it has one):
// the receipt's engine_state. summary is {"state", "exitCode", "reason"} and exit_code_record
// {"exitCode"}, in the API's words (null where the state has none). A Pod in a terminal phase
// whose box never started stays "pending": PodFacts says why it ended.
// Once it is "exited", kill_acknowledged says whether the container's termination message
// (state.terminated.message, absent or a string of at most k_max_termination_message_bytes) is
// exactly the fed box's record of the kill that carried `kill_nonce` (proto::fed_kill_record;
// `kill_nonce` empty: no kill was sent, so false), and kill_acknowledgement_record is
// {"terminationMessage", "kill_nonce"} (null where there is none); before, both are empty.
engine::BoxState box_container_state(const boost::json::value& pod, std::string_view kill_nonce = {});
// That state, with the whole Pod as the inspection's raw answer.
engine::BoxInspection inspect_pod(boost::json::value pod, std::string_view kill_nonce = {});

// The longest termination message the API reports: the kubelet reads the last 4096 bytes of the
// file, and the API's JSON writes each byte of them that is not UTF-8 as U+FFFD (3 bytes).
inline constexpr std::size_t k_max_termination_message_bytes = 3 * 4096;

struct PodFacts {
    std::string phase;    // "Pending", "Running", "Succeeded", "Failed", "Unknown"; empty when not reported
    std::string reason;   // the Pod's, e.g. "DeadlineExceeded", "Evicted"; empty when none
    std::string message;  // the Pod's sentence for that reason
    std::string node_name;
    std::string name;
    std::string uid;
    std::string resource_version;  // metadata.resourceVersion: where a watch of the Pod starts
    // The box container's: the image it runs ("docker-pullable://...@sha256:..."; empty before
    // it started), and why it waits (e.g. "ContainerCreating", "ErrImagePull",
    // "CreateContainerConfigError") with the kubelet's sentence.
    std::string image_id;
    std::string waiting_reason;
    std::string waiting_message;
    bool box_ended = false;  // the box container's state is terminated
};
// Fields that are missing or of another type are left empty.
PodFacts pod_facts(const boost::json::value& pod);

// Whether this version of the Pod shows its box's end: the box container's state reported
// terminated (box_container_state), or the Pod in a terminal phase ("Succeeded", "Failed": it
// ended without its box, e.g. DeadlineExceeded). The end wait's rule.
bool shows_end(const boost::json::value& pod);

// The boxes of a PodList answer: id "<name>/<uid>" and the Pod's labels. "engine_protocol" when
// the answer is not a PodList of Pods with a valid name and UID and string labels.
Expected<std::vector<engine::ListedBox>> listed_pods(const boost::json::value& list);

struct PodRef {
    std::string name;  // a DNS-1123 subdomain, at most 253 bytes
    std::string uid;   // 36 characters: 8-4-4-4-12 lowercase hex digits
    bool operator==(const PodRef&) const = default;
};
// A box id "<name>/<uid>" split strictly; nullopt for anything else.
std::optional<PodRef> parse_pod_ref(std::string_view id);
std::string pod_ref_id(const PodRef& ref);

}  // namespace pybox::kube
