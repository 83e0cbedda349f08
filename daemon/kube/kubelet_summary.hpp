// The kubelet's summary of its node (GET /api/v1/nodes/NODE/proxy/stats/summary, the kubelet's
// stats/v1alpha1 Summary, asked for CPU and memory only) read for one container of one Pod: the
// figures its cAdvisor last sampled. Pure.
//
// The answer is untrusted: at most k_max_kubelet_summary_bytes, strict JSON (nothing after the
// value, no repeated key, nested at most k_summary_depth levels). Keys the reader does not use
// are ignored, as an API client must (a newer kubelet adds some); what it uses must have its
// type: every Pod's `podRef` its `name`, `namespace` and `uid` strings; of the Pod, matched by
// all three, its `containers` (an array, or null) with a string `name` each; of the container,
// matched by name, `cpu` {`time`, `usageCoreNanoSeconds`} and `memory` {`time`,
// `workingSetBytes`, `usageBytes`, `rssBytes`}, each object absent or null, each time an RFC 3339
// timestamp and each figure an unsigned integer, absent or null when the kubelet has none (it
// omits what cAdvisor did not sample). A Pod or container listed twice is refused, since its
// entry would be ambiguous.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::kube {

// How deep a summary is nested (a Pod's volume's PVC reference is five levels down).
inline constexpr std::size_t k_summary_depth = 16;

// The path of a node's summary, CPU and memory only.
std::string summary_path(std::string_view node);

// A Pod as the summary names it (podRef).
struct SummaryPod {
    std::string namespace_name;
    std::string name;
    std::string uid;
};

// One container's figures as the kubelet gave them; nullopt where it gave none.
struct ContainerStats {
    std::optional<std::string> cpu_time;  // RFC 3339: when cAdvisor sampled the CPU figure
    std::optional<std::uint64_t> usage_core_nanoseconds;  // CPU time used since the container began
    std::optional<std::string> memory_time;  // RFC 3339: when cAdvisor sampled the memory figures
    std::optional<std::uint64_t> working_set_bytes;  // usage less inactive file pages
    std::optional<std::uint64_t> usage_bytes;        // the cgroup's memory usage
    std::optional<std::uint64_t> rss_bytes;          // anonymous memory and swap cache
    bool operator==(const ContainerStats&) const = default;
};

// The entry of `container` of `pod` in the summary `body`: nullopt when the summary lists no such
// Pod or no such container of it; "engine_protocol" when `body` is not such a summary.
Expected<std::optional<ContainerStats>> container_stats(std::string_view body, const SummaryPod& pod,
                                                        std::string_view container);

}  // namespace pybox::kube
