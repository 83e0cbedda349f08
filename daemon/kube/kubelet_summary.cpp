#include "daemon/kube/kubelet_summary.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "daemon/kube/kube_limits.hpp"
#include "util/json_reader.hpp"
#include "util/strict_json.hpp"

#include <boost/json/value.hpp>

#include <utility>

namespace pybox::kube {

namespace {

namespace json = boost::json;
using util::ObjectReader;

Error refused(const std::string& problem)
{
    return make_error(api_error::k_engine_protocol, "The kubelet's summary " + problem + ".");
}

// The object under `key`, or nullopt when it is absent or null.
std::optional<ObjectReader> optional_object(ObjectReader& reader, std::string_view key)
{
    const auto* value = reader.if_present(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    return reader.object(key);
}

std::optional<std::uint64_t> optional_count(ObjectReader& reader, std::string_view key)
{
    const auto* value = reader.if_present(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    return reader.uint64(key);
}

// The sample's time: an RFC 3339 timestamp, absent or null when not given.
std::optional<std::string> optional_time(ObjectReader& reader, std::string_view key)
{
    const auto* value = reader.if_present(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    auto text = reader.string(key);
    if (!parse_rfc3339_ns(text)) {
        reader.fail(key, "must be an RFC 3339 time");
        return std::nullopt;
    }
    return text;
}

ContainerStats read_stats(ObjectReader& container)
{
    ContainerStats stats;
    if (auto cpu = optional_object(container, "cpu")) {
        stats.cpu_time = optional_time(*cpu, "time");
        stats.usage_core_nanoseconds = optional_count(*cpu, "usageCoreNanoSeconds");
    }
    if (auto memory = optional_object(container, "memory")) {
        stats.memory_time = optional_time(*memory, "time");
        stats.working_set_bytes = optional_count(*memory, "workingSetBytes");
        stats.usage_bytes = optional_count(*memory, "usageBytes");
        stats.rss_bytes = optional_count(*memory, "rssBytes");
    }
    return stats;
}

// The elements of the array under `key` as objects; none when it is absent or null.
std::vector<ObjectReader> optional_objects(ObjectReader& reader, std::string_view key)
{
    const auto* value = reader.if_present(key);
    if (value == nullptr || value->is_null()) return {};
    return reader.objects(key);
}

}  // namespace

std::string summary_path(std::string_view node)
{
    return "/api/v1/nodes/" + std::string(node) + "/proxy/stats/summary?only_cpu_and_memory=true";
}

Expected<std::optional<ContainerStats>> container_stats(std::string_view body, const SummaryPod& pod,
                                                        std::string_view container)
{
    if (body.size() > k_max_kubelet_summary_bytes)
        return refused("is larger than " + std::to_string(k_max_kubelet_summary_bytes) + " bytes");
    const auto parsed = util::parse_json_strictly(body, k_summary_depth);
    if (!parsed.ok()) return refused(parsed.refusal());
    if (!parsed.value.is_object()) return refused("is not a JSON object");
    std::string error;
    ObjectReader summary(parsed.value, "summary", error, util::ReadMode::tolerant);
    std::optional<ContainerStats> found;
    bool pod_seen = false;
    for (auto& listed : optional_objects(summary, "pods")) {
        auto ref = listed.object("podRef");
        const auto name = ref.string("name");
        const auto namespace_name = ref.string("namespace");
        const auto uid = ref.string("uid");
        if (!error.empty()) break;
        if (name != pod.name || namespace_name != pod.namespace_name || uid != pod.uid) continue;
        if (pod_seen) return refused("lists the Pod " + pod.namespace_name + "/" + pod.name + " twice");
        pod_seen = true;
        for (auto& entry : optional_objects(listed, "containers")) {
            if (entry.string("name") != container || !error.empty()) continue;
            if (found) return refused("lists the container " + std::string(container) + " of the Pod twice");
            found = read_stats(entry);
        }
    }
    if (!error.empty()) return refused("is not a summary of Pods: " + error);
    return found;
}

}  // namespace pybox::kube
