// Helpers for the cluster tests (kube_test.cpp, kube_hostile_test.cpp) on the Kubernetes test
// cluster (tests/k8s/cluster_up.sh; its cluster.env through tests/support/cluster_env.hpp): the
// daemon whose only engine that takes runs is the cluster, kubectl as the cluster's admin, and
// runs observed by an independent watch of their Pods (pod_watch.hpp). Test-thread only;
// failures fail the test.
#pragma once

#include "tests/integration/harness.hpp"
#include "tests/integration/pod_watch.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace pybox::test {

// The config.json "engines" entry of the test cluster, with the kubeconfig named by the
// cluster.env key `kubeconfig_key`.
boost::json::object cluster_entry(const std::string& kubeconfig_key = "K8S_ADMIN_KUBECONFIG");
// A config.json whose only engine is `entry` (no local engine takes runs).
boost::json::object cluster_only(const boost::json::object& entry);
// The engine "cluster" of a `vm status --json` answer.
boost::json::object cluster_status(const boost::json::value& answer);

// `kubectl ARGS...` as the cluster's admin (Debian's kubectl 1.20: tests/k8s/kubectl.sh); the
// output, requiring exit 0.
std::string kubectl(const std::vector<std::string>& args);
// The Pods in the test namespace that carry the daemon's run label `run_id`.
std::string pods_of_run(const std::string& run_id);

// One daemon for the cluster cases: started once, its images pushed by `vm start`.
SideDaemon& cluster_daemon();

// observed.termination.mechanism of a run's receipt.
std::string termination_mechanism(const JsonRun& run);

// A run on the cluster daemon (`pybox exec - --json extra...`) with a PodWatch running from
// before the run until the watch saw its Pod deleted, the receipt held against the watch's
// record of that Pod (check_receipt_against_pod_history).
struct WatchedRun {
    JsonRun run;
    std::vector<PodEvent> pod_history;
};
WatchedRun run_watched(const std::string& program, const std::vector<std::string>& extra = {});

}  // namespace pybox::test
