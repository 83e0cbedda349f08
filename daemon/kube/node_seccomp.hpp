// The fall back from PyBox's own seccomp profile to the runtime's default on a node that lacks it
// (docs/kubernetes.md, "Seccomp"). A sealed Pod asks for PyBox's profile as a Localhost profile,
// a file the node must hold under its kubelet's seccomp root, which the API cannot show. A node
// without it is recognised from the box container's status, strictly: only the kubelet's own
// words for a missing profile file, as measured (nothing else is taken for it). The backend then
// remembers the node for k_missing_profile_memory (or until `vm status` makes it forget), and its
// Pods ask for the runtime's default (RuntimeDefault) meanwhile. Pure: the times are given.
#pragma once

#include "common/clock.hpp"
#include "daemon/kube/pod_state.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <map>
#include <string>
#include <string_view>

namespace pybox::kube {

// How long a node seen without PyBox's profile is remembered: its Pods ask for RuntimeDefault
// until then, and the first Pod after it asks for the Localhost profile again (a node that still
// lacks it costs that run a Pod made again).
inline constexpr std::chrono::minutes k_missing_profile_memory{10};

// Whether the box container's status says its node has no file for the Localhost profile
// `profile` (relative to the kubelet's seccomp root, e.g. "pybox-seccomp-v2.json"): the waiting
// reason CreateContainerError with the message Kubernetes 1.20's dockershim gives when it cannot
// read the profile file because there is none (measured, docs/kubernetes.md). False for an empty
// `profile` (a Pod that asked for RuntimeDefault) and for anything else.
bool lacks_localhost_profile(const PodFacts& facts, std::string_view profile);

// What was seen of a node without the profile: when, and the kubelet's words.
struct MissingProfile {
    std::string node;
    MonoClock::time_point seen;
    WallClock::time_point seen_wall;
    std::string kubelet_said;  // "<waiting reason>: <message>"
};
// As the receipt's effective_policy records it: {"node", "seen_at" (RFC 3339), "kubelet"}.
boost::json::object missing_profile_record(const MissingProfile& missing);

// The nodes seen without PyBox's profile, each for k_missing_profile_memory.
class MissingProfileNodes {
public:
    void note(MissingProfile missing);
    // What was seen of `node` less than k_missing_profile_memory before `now`, or nullptr.
    const MissingProfile* lacking(std::string_view node, MonoClock::time_point now) const;
    void forget_all() { m_nodes.clear(); }

private:
    std::map<std::string, MissingProfile, std::less<>> m_nodes;
};

}  // namespace pybox::kube
