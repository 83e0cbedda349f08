// What the kubelet's summary (kubelet_summary.hpp) showed of a box's container while it ran, and
// the receipt's observed.resources made of it (docs/receipt.md, "resources on a cluster"). Pure.
//
// The summary is cAdvisor's latest sample of the container, refreshed about every 10-15 s
// (measured on the test cluster, Kubernetes 1.20), and the kubelet drops the container's entry
// once it ended (no entry in 22 of 22 runs read after the end): so only samples taken while the
// program ran are known, never a value at its end. The receipt says them as what they are: the
// CPU time a lower bound of the program's (`cpu.stat.usage_usec`, a counter whose `final` is
// null), the memory figures gauges at their samples' times, each metric with the summary's own
// time of its first and last sample. `final_counters_complete` is false and
// `unknown.final_resource_counters` says why. With no sample at all the status is UNKNOWN, and
// the reason says whether no read was answered, every read failed (the last failure's words) or
// the summary had no entry for the container.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/kube/kubelet_summary.hpp"

#include <optional>
#include <string>

namespace pybox::kube {

// A box's reads of its node's summary, in the order they were answered.
struct SummaryReads {
    std::string node;
    int with_entry = 0;     // reads that found the container's entry
    int without_entry = 0;  // reads whose summary had none
    int failed = 0;         // reads that failed (the apiserver, the kubelet, a malformed summary)
    int samples = 0;  // distinct samples among the entries found (a new cpu or memory time)
    std::optional<std::string> last_failure;
    std::optional<ContainerStats> first;    // the first entry found
    std::optional<ContainerStats> last;     // the latest
    std::optional<ContainerStats> highest;  // each figure's highest, its time that of its latest sample

    void add(const Expected<std::optional<ContainerStats>>& read);
};

// The receipt's observed.resources and `unknown` entries of those reads.
ResourceObservation sampled_resources(const SummaryReads& reads);

}  // namespace pybox::kube
