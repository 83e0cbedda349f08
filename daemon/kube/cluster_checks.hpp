// What `vm status` says of a cluster engine, as pure functions of what the apiserver answered
// (cluster_probe.hpp makes the calls): the apiserver's version (GET /version), whether the
// namespace exists (GET /api/v1/namespaces/NS), whether the user may do each thing the backend
// does (one SelfSubjectAccessReview per verb and resource), and the node's pids limit (the
// kubelet's configuration through the node proxy: GET /api/v1/nodes/NODE/proxy/configz).
//
// Each finding is one ClusterProblem with a check name and one sentence; none means the check
// passed. Answers are read as an API client must (unknown keys ignored), except the kubelet's
// configz, which is read strictly as JSON (no repeated key, nothing after it) because its
// podPidsLimit decides a part of the seal.
#pragma once

#include "common/error.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pybox::kube {

struct ClusterProblem {
    std::string check;    // "apiserver", "namespace", "access", "node"
    std::string message;  // why, in one sentence
    bool operator==(const ClusterProblem&) const = default;
};

// The oldest Kubernetes the backend was measured on (../shared/k8s).
inline constexpr unsigned k_oldest_minor_version = 20;

struct ServerVersion {
    unsigned major = 0;
    unsigned minor = 0;
    std::string git_version;  // "v1.20.2"
};
// GET /version's answer: "major" "1", "minor" "20" (a trailing '+' allowed, as some vendors
// write), "gitVersion"; "engine_protocol" for anything else.
Expected<ServerVersion> parse_server_version(const boost::json::value& answer);
// A problem when the apiserver is older than 1.<k_oldest_minor_version>.
std::optional<ClusterProblem> version_problem(const ServerVersion& version);

// GET /api/v1/namespaces/NS answered `status` with `body`: none for an Active namespace.
std::optional<ClusterProblem> namespace_problem(std::string_view namespace_name, unsigned status,
                                                std::string_view body);

// One permission the backend needs.
struct AccessNeed {
    std::string_view verb;
    std::string_view group;  // "" for the core API group
    std::string_view resource;
    std::string_view subresource;  // "" for none
    bool namespaced = true;        // false for nodes/proxy
};
// Every permission the backend uses: pods create, get, list, watch, delete; pods/attach create
// and get (a websocket attach is a GET); namespaces get (the namespace check); nodes/proxy get
// (the kubelet's configz and its summary of a running box's node); networkpolicies get, list,
// create.
std::span<const AccessNeed> backend_access_needs();
// "create pods/attach", "get nodes/proxy", "list networkpolicies.networking.k8s.io".
std::string describe_need(const AccessNeed& need);

// The body of POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews asking for `need`
// (in `namespace_name` when it is namespaced).
boost::json::value access_review(const AccessNeed& need, std::string_view namespace_name);

struct AccessDecision {
    bool allowed = false;
    std::string reason;  // the authorizer's, may be empty
};
// The review's answer (status.allowed, status.reason); "engine_protocol" for anything else.
Expected<AccessDecision> parse_access_review(const boost::json::value& answer);
// A problem naming the permission when it is not allowed.
std::optional<ClusterProblem> access_problem(const AccessNeed& need, std::string_view namespace_name,
                                             std::string_view user, const AccessDecision& decision);

// The kubelet's podPidsLimit from configz's answer ({"kubeletconfig": {..., "podPidsLimit": N}}):
// N when it is positive, else nullopt (no limit: the kubelet sets a Pod's pids.max only for a
// positive figure; its default is -1). "engine_protocol" when the answer is not such JSON or has
// no integer podPidsLimit.
Expected<std::optional<std::int64_t>> parse_pod_pids_limit(std::string_view body);

}  // namespace pybox::kube
