#include "daemon/kube/kubelet_resources.hpp"

#include <boost/json/array.hpp>

#include <algorithm>
#include <array>

namespace pybox::kube {

namespace {

namespace json = boost::json;

struct SampledMetric {
    std::string_view name;  // the receipt's name (docs/receipt.md)
    std::string_view summary_field;
    std::optional<std::uint64_t> ContainerStats::*value;
    std::optional<std::string> ContainerStats::*time;
    std::uint64_t divisor;  // 1000 turns nanoseconds into microseconds
};

const std::array<SampledMetric, 4> k_sampled_metrics = {{
    {"cpu.stat.usage_usec", "cpu.usageCoreNanoSeconds", &ContainerStats::usage_core_nanoseconds,
     &ContainerStats::cpu_time, 1000},
    {"memory.current", "memory.usageBytes", &ContainerStats::usage_bytes, &ContainerStats::memory_time, 1},
    {"memory.working_set", "memory.workingSetBytes", &ContainerStats::working_set_bytes, &ContainerStats::memory_time,
     1},
    {"memory.stat.rss", "memory.rssBytes", &ContainerStats::rss_bytes, &ContainerStats::memory_time, 1},
}};

void keep_highest(std::optional<std::uint64_t>& highest, const std::optional<std::uint64_t>& value)
{
    if (value) highest = std::max(highest.value_or(0), *value);
}

json::value scaled(const std::optional<ContainerStats>& stats, const SampledMetric& metric)
{
    if (!stats || !((*stats).*metric.value)) return nullptr;
    return static_cast<std::int64_t>(*((*stats).*metric.value) / metric.divisor);
}

json::value time_of(const std::optional<ContainerStats>& stats, const SampledMetric& metric)
{
    if (!stats || !((*stats).*metric.value) || !((*stats).*metric.time)) return nullptr;
    return json::value(*((*stats).*metric.time));
}

std::string source_text(const SummaryReads& reads)
{
    return "the kubelet's summary API of the node " + reads.node + " (GET /api/v1/nodes/" + reads.node +
           "/proxy/stats/summary through the apiserver), its cAdvisor's samples of the Pod's container box, read "
           "while the box ran";
}

std::string reads_text(const SummaryReads& reads)
{
    const int answered = reads.with_entry + reads.without_entry;
    return std::to_string(answered + reads.failed) + " read" + (answered + reads.failed == 1 ? "" : "s") + " (" +
           std::to_string(reads.failed) + " failed)";
}

std::string why_no_sample(const SummaryReads& reads)
{
    const std::string summary = "the kubelet's summary of the node " + reads.node;
    if (reads.with_entry + reads.without_entry + reads.failed == 0)
        return "the box ended before a read of " + summary + " (through the apiserver's node proxy) was answered";
    if (reads.with_entry + reads.without_entry == 0)
        return "every read of " + summary + " (through the apiserver's node proxy) failed, " + reads_text(reads) +
               "; the last: " + reads.last_failure.value_or("no reason given");
    return summary + " had no entry for the box's container in any of the " + reads_text(reads) +
           " made while it ran (its cAdvisor lists a container only once it sampled it)";
}

std::string why_no_final(const SummaryReads& reads)
{
    const auto& time = reads.last && reads.last->cpu_time ? reads.last->cpu_time : reads.last ? reads.last->memory_time
                                                                                               : std::nullopt;
    return "only samples of the kubelet's summary taken while the program ran are known (the latest at " +
           time.value_or("a time not given") +
           "): the kubelet keeps no entry for a container once it ended, so nothing is read at the program's end, "
           "and its cAdvisor refreshes a container's figures only about every 10-15 s; the CPU time is a lower "
           "bound of the program's, the memory figures are those of the samples' moments, and no peak, process "
           "count, CPU throttling or OOM counter is in the summary";
}

json::object read_counts(const SummaryReads& reads)
{
    return json::object{{"with_entry", reads.with_entry}, {"without_entry", reads.without_entry}, {"failed", reads.failed}};
}

json::array errors_of(const SummaryReads& reads)
{
    json::array errors;
    if (reads.failed > 0)
        errors.emplace_back(std::to_string(reads.failed) + " of the " + reads_text(reads) +
                            " of the kubelet's summary failed; the last: " + reads.last_failure.value_or("no reason given"));
    return errors;
}

}  // namespace

void SummaryReads::add(const Expected<std::optional<ContainerStats>>& read)
{
    if (!read) {
        ++failed;
        last_failure = read.error().message;
        return;
    }
    if (!*read) {
        ++without_entry;
        return;
    }
    const auto& stats = **read;
    ++with_entry;
    if (!last || last->cpu_time != stats.cpu_time || last->memory_time != stats.memory_time) ++samples;
    if (!first) first = stats;
    last = stats;
    if (!highest) highest = ContainerStats{};
    highest->cpu_time = stats.cpu_time;
    highest->memory_time = stats.memory_time;
    for (const auto& metric : k_sampled_metrics) keep_highest((*highest).*metric.value, stats.*metric.value);
}

ResourceObservation sampled_resources(const SummaryReads& reads)
{
    ResourceObservation out;
    auto& resources = out.resources;
    if (!reads.last) {
        const std::string reason = why_no_sample(reads);
        resources = json::object{{"status", "UNKNOWN"},
                                 {"reason", reason},
                                 {"source", source_text(reads)},
                                 {"node", reads.node},
                                 {"reads", read_counts(reads)},
                                 {"errors", errors_of(reads)}};
        out.unknown.emplace_back("resources", reason);
        out.unknown.emplace_back("final_resource_counters", reason);
        return out;
    }
    json::object metrics;
    for (const auto& metric : k_sampled_metrics)
        metrics[metric.name] = json::object{{"first", scaled(reads.first, metric)},
                                            {"last", scaled(reads.last, metric)},
                                            {"max", scaled(reads.highest, metric)},
                                            {"final", nullptr},
                                            {"final_source", nullptr},
                                            {"summary_field", metric.summary_field},
                                            {"first_time", time_of(reads.first, metric)},
                                            {"last_time", time_of(reads.last, metric)}};
    resources = json::object{{"status", "COLLECTED"},
                             {"source", source_text(reads)},
                             {"node", reads.node},
                             {"reads", read_counts(reads)},
                             {"sample_count", reads.samples},
                             {"final_counters_complete", false},
                             {"metrics", std::move(metrics)},
                             {"errors", errors_of(reads)}};
    out.unknown.emplace_back("final_resource_counters", why_no_final(reads));
    return out;
}

}  // namespace pybox::kube
