// An independent observer of a run on the Kubernetes test cluster, as the Docker tests have the
// engine's event stream (harness.hpp engine_events): the apiserver's own watch of the test
// namespace's Pods, read by Debian's kubectl as the cluster's admin (`kubectl get --raw
// /api/v1/namespaces/NS/pods?watch=1&resourceVersion=RV`), none of PyBox's code. It starts from
// the namespace's resourceVersion as listed when the PodWatch is made, so every version of every
// Pod written after that is in it, however late kubectl's connection comes up; kubectl writes
// the events (one JSON object a line, as the apiserver sends them) to a file of its own, which
// history() reads. Test-thread only; failures fail the test.
#pragma once

#include "tests/integration/harness.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <filesystem>
#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace pybox::test {

// One watch event: "ADDED", "MODIFIED" or "DELETED", and the Pod as the apiserver held it then.
struct PodEvent {
    std::string type;
    boost::json::object pod;
};

class PodWatch {
public:
    // Lists the namespace (its resourceVersion), then starts kubectl's watch from there.
    PodWatch();
    // Stops kubectl (SIGKILL: it was started here, detached) and removes its file.
    ~PodWatch();
    PodWatch(const PodWatch&) = delete;
    PodWatch& operator=(const PodWatch&) = delete;

    // Every event so far, of every Pod, in the apiserver's order. A line that is not a watch
    // event of a Pod (an ERROR event, kubectl's complaint) fails the test.
    std::vector<PodEvent> events() const;
    // The events of the Pod whose UID is `uid`, once its DELETED event has arrived (waiting up
    // to `limit`; after that, the events so far).
    std::vector<PodEvent> history(const std::string& uid, std::chrono::seconds limit = std::chrono::seconds(10)) const;
    // The events of every Pod carrying the run label `run_id` (pybox.run), one history a Pod in
    // the order they first appeared, once `pods` Pods were seen and each one's DELETED event has
    // arrived (waiting up to `limit`; after that, the events so far).
    std::vector<std::vector<PodEvent>> run_histories(const std::string& run_id, std::size_t pods,
                                                     std::chrono::seconds limit = std::chrono::seconds(10)) const;

private:
    std::filesystem::path m_file;
    int m_pid = -1;
};

// What in the watch's record of a run's Pod contradicts the run's receipt, one sentence each
// (none: nothing does); a receipt or Pod without the documented fields fails the test. Held:
// - the history is the Pod's whole life: first ADDED, and DELETED last exactly when the receipt
//   says the Pod was removed, deleted with grace 0 as docs/kubernetes.md says, and not before
//   the container's end was in the Pod's status (the receipt's engine_state is from that end);
// - container_id is "<the Pod's name>/<its UID>"; every version of the Pod has exactly the spec,
//   labels and annotations of the receipt's effective_policy (securityContext, resources,
//   volumes, nodeName, image, ...), one container `box` in its status, never restarted, and no
//   init container; effective_policy.node_pids_limit names the Pod's node;
// - the container's terminated state in the Pod's status (its last, and no other end before it)
//   is the receipt's engine_state.state.terminated, field for field (exit code, reason,
//   message, startedAt and finishedAt to the second, containerID), its imageID the receipt's
//   engine_state.imageID and effective_policy.image_id, and finishedAt - startedAt its
//   engine_lifetime_s;
// - nothing contradicts the receipt's conclusion: its exit code is the status's; OUT_OF_MEMORY
//   only where the status says OOMKilled with exit code 137, and such a status is never called
//   the program's own end; an OOM kill among the receipt's explanations (OUT_OF_MEMORY or
//   OOM_KILL_IN_BOX) exactly where the status says OOMKilled; DEADLINE_KILL (or STOPPED_ON_DISCONNECT) exactly when the termination message is
//   the feeder's record of a kill nonce the receipt names and the exit code 137.
std::vector<std::string> pod_history_contradictions(const boost::json::value& receipt,
                                                    const std::vector<PodEvent>& history);
// A test failure for each of them, with the watch's events and the receipt.
void check_receipt_against_pod_history(const JsonRun& run, const std::vector<PodEvent>& history);

// What in the record of a Pod a run made but never ran its program in contradicts the receipt
// (none: nothing does). Such a Pod is the one of a run refused before its program (the receipt's
// container_id) or the first Pod of a box made again (named by the receipt's BOX_REMADE
// explanation). Held: the history is the Pod's whole life (ADDED first, DELETED last: the
// receipt says the Pod was removed, or the BOX_REMADE explanation says it was confirmed gone)
// and every version carries the run's label and was deleted with grace 0; its container never
// ran (no running or terminated state, in no version); when the receipt's container_id names it,
// every version has exactly effective_policy's spec, labels and annotations; when BOX_REMADE
// names it, the kubelet's words in its container's waiting state are the explanation's.
std::vector<std::string> unstarted_pod_contradictions(const boost::json::value& receipt,
                                                      const std::vector<PodEvent>& history);
// A test failure for each of them, with the watch's events and the receipt.
void check_unstarted_pod(const JsonRun& run, const std::vector<PodEvent>& history);

// What in the record of a run's Pod whose apiserver went away mid-run contradicts its receipt
// (none: nothing does). `until_lost` is a watch's record up to the moment the apiserver went
// away (the watch ends with it); `after_return` that of a watch started once it was back. Held:
// `until_lost` begins with ADDED; every version in both is the receipt's container_id with
// effective_policy's spec, labels and annotations; `until_lost` shows no end of the container
// and no deletion (the receipt claims neither: no end observed, removal unconfirmed); and
// `after_return` ends with the Pod's deletion, with grace 0.
std::vector<std::string> lost_pod_contradictions(const boost::json::value& receipt,
                                                 const std::vector<PodEvent>& until_lost,
                                                 const std::vector<PodEvent>& after_return);

}  // namespace pybox::test
