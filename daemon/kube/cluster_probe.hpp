// The calls behind `vm status`'s checks of a cluster engine (cluster_checks.hpp holds the
// conclusions): GET /version, GET /api/v1/namespaces/NS, one SelfSubjectAccessReview per
// permission the backend needs, and the kubelet's configz through the node proxy.
//
// Every call is bounded by `timeout` (each call its own). An apiserver that cannot be reached or
// answers wrongly is one "apiserver" problem and ends the checks (the rest would say the same);
// otherwise each check adds its own problems. Coroutines run on the caller's executor; the client
// must outlive them.
#pragma once

#include "daemon/kube/cluster_checks.hpp"
#include "daemon/kube/kube_client.hpp"

#include <vector>

namespace pybox::kube {

struct ClusterReport {
    std::optional<ServerVersion> version;  // when /version answered
    std::vector<ClusterProblem> problems;  // none: the cluster passed every check
};

// The apiserver, the namespace and every permission of backend_access_needs().
net::awaitable<ClusterReport> check_cluster(KubeClient& client, std::string namespace_name, Timeout timeout);

// The node's podPidsLimit (parse_pod_pids_limit()): nullopt for no limit.
net::awaitable<Expected<std::optional<std::int64_t>>> read_pod_pids_limit(KubeClient& client, std::string node,
                                                                         Timeout timeout);

}  // namespace pybox::kube
