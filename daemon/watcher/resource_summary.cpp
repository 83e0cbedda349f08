#include "daemon/watcher/resource_summary.hpp"

#include <boost/json/array.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <optional>

namespace pybox::watcher {

namespace json = boost::json;

namespace {

enum class Kind { gauge, counter };

// Whether the run parent's file still holds the box's value after the box's cgroup is gone.
enum class Hierarchy {
    own_cgroup_only,
    hierarchical,
    // v2 pids.events: hierarchical only on kernels that also have pids.events.local (>= 6.13).
    hierarchical_with_local_file,
};

struct KernelSource {
    std::string_view key;
    Hierarchy hierarchy = Hierarchy::own_cgroup_only;
    std::int64_t divisor = 1;  // 1000 turns v1's nanoseconds into microseconds
};

struct MetricSpec {
    std::string_view name;
    Kind kind;
    std::optional<KernelSource> v1;
    std::optional<KernelSource> v2;
};

constexpr auto k_own = Hierarchy::own_cgroup_only;
constexpr auto k_tree = Hierarchy::hierarchical;

// Measured on kernel 6.18 (docs/receipt.md repeats it): which counters the run parent keeps.
// Each metric is named by its cgroup v2 file (the seed's names, "memory.peak"); a v1 file is
// read under the v2 name of the same counter, and a counter only v1 has keeps its v1 name.
const std::array<MetricSpec, 18> k_metrics = {{
    {"memory.current", Kind::gauge, KernelSource{"memory.usage_in_bytes"}, KernelSource{"memory.current"}},
    {"memory.peak", Kind::counter, KernelSource{"memory.max_usage_in_bytes", k_tree},
     KernelSource{"memory.peak", k_tree}},
    {"memory.memsw.usage_in_bytes", Kind::gauge, KernelSource{"memory.memsw.usage_in_bytes"}, std::nullopt},
    {"memory.memsw.max_usage_in_bytes", Kind::counter, KernelSource{"memory.memsw.max_usage_in_bytes", k_tree},
     std::nullopt},
    {"memory.swap.current", Kind::gauge, std::nullopt, KernelSource{"memory.swap.current"}},
    {"memory.swap.peak", Kind::counter, std::nullopt, KernelSource{"memory.swap.peak", k_tree}},
    // Not on v1: memory.failcnt (and memory.memsw.failcnt) stayed 0 through an OOM kill at the
    // limit on kernel 6.18, measured, so a 0 would read as "the limit was not hit".
    {"memory.events.max", Kind::counter, std::nullopt, KernelSource{"memory.events.max", k_tree}},
    {"memory.events.oom", Kind::counter, std::nullopt, KernelSource{"memory.events.oom", k_tree}},
    {"memory.events.oom_kill", Kind::counter, KernelSource{"memory.oom_control.oom_kill", k_own},
     KernelSource{"memory.events.oom_kill", k_tree}},
    {"cpu.stat.usage_usec", Kind::counter, KernelSource{"cpuacct.usage", k_tree, 1000},
     KernelSource{"cpu.stat.usage_usec", k_tree}},
    {"cpu.stat.user_usec", Kind::counter, KernelSource{"cpuacct.usage_user", k_tree, 1000},
     KernelSource{"cpu.stat.user_usec", k_tree}},
    {"cpu.stat.system_usec", Kind::counter, KernelSource{"cpuacct.usage_sys", k_tree, 1000},
     KernelSource{"cpu.stat.system_usec", k_tree}},
    // Sampled only, as a gauge: the kernel's CFS bandwidth timer goes on counting periods after
    // the box's last task ended (measured: 1 right after the exit, 2 half a second later, the CPU
    // time unchanged), so no reading after the exit is final.
    {"cpu.stat.nr_periods", Kind::gauge, KernelSource{"cpu.stat.nr_periods"}, KernelSource{"cpu.stat.nr_periods"}},
    {"cpu.stat.nr_throttled", Kind::counter, KernelSource{"cpu.stat.nr_throttled", k_own},
     KernelSource{"cpu.stat.nr_throttled", k_own}},
    {"cpu.stat.throttled_usec", Kind::counter, KernelSource{"cpu.stat.throttled_time", k_own, 1000},
     KernelSource{"cpu.stat.throttled_usec", k_own}},
    {"pids.current", Kind::gauge, KernelSource{"pids.current"}, KernelSource{"pids.current"}},
    {"pids.peak", Kind::counter, KernelSource{"pids.peak", k_tree}, KernelSource{"pids.peak", k_tree}},
    {"pids.events.max", Kind::counter, KernelSource{"pids.events.max", k_own},
     KernelSource{"pids.events.max", Hierarchy::hierarchical_with_local_file}},
}};

constexpr std::string_view k_local_pids_events = "pids.events.local.max";

const std::optional<KernelSource>& source_for(const MetricSpec& metric, CgroupVersion version)
{
    return version == CgroupVersion::v1 ? metric.v1 : metric.v2;
}

std::string version_text(CgroupVersion version) { return std::to_string(static_cast<int>(version)); }

std::string source_text(CgroupVersion version)
{
    return "kernel watcher (cgroup v" + version_text(version) +
           " files of the box and of its run parent, read on the engine's host)";
}

json::value or_null(const std::optional<std::int64_t>& value)
{
    return value ? json::value(*value) : json::value(nullptr);
}

// The parent's value of this counter stands for the box's only where the kernel keeps it
// hierarchically; for pids.events on v2 that is known from the pids.events.local file.
bool parent_holds(const KernelSource& source, const Reading& parent)
{
    switch (source.hierarchy) {
    case Hierarchy::own_cgroup_only:
        return false;
    case Hierarchy::hierarchical:
        return true;
    case Hierarchy::hierarchical_with_local_file:
        return parent.value(k_local_pids_events).has_value();
    }
    return false;
}

struct MetricValues {
    std::optional<std::int64_t> first;
    std::optional<std::int64_t> last;
    std::optional<std::int64_t> max;
    std::optional<std::int64_t> final;
    std::string_view final_source;  // empty without a final value
    std::string no_final_reason;    // for a counter without a final value
};

std::string why_no_final(const WatchRecord& record)
{
    if (!record.end) return "the watcher's output stopped before its end line";
    switch (*record.end) {
    case WatchEnd::final:
        return "the watcher took no final reading";
    case WatchEnd::wait_timeout:
        return "the run's cgroup still held a task when the watcher stopped waiting after the exit, so no "
               "final reading was taken";
    case WatchEnd::time:
        return "the watcher reached its time limit before the exit was reported to it";
    case WatchEnd::signal:
        return "the watcher was stopped before it took its final reading";
    }
    return "the watcher took no final reading";
}

MetricValues metric_values(const MetricSpec& metric, const KernelSource& source, const WatchRecord& record)
{
    MetricValues values;
    for (const auto& sample : record.samples) {
        if (const auto value = sample.value(source.key)) {
            if (!values.first) values.first = *value / source.divisor;
            values.last = *value / source.divisor;
            values.max = std::max(values.max.value_or(0), *values.last);
        }
    }
    if (metric.kind == Kind::gauge) return values;
    if (!record.final_box || !record.final_parent) {
        values.no_final_reason = why_no_final(record);
        return values;
    }
    if (const auto value = record.final_box->value(source.key)) {
        values.final = *value / source.divisor;
        values.final_source = "box_cgroup_after_exit";
    } else if (!parent_holds(source, *record.final_parent)) {
        values.no_final_reason = (record.final_box->gone ? "the box's cgroup was already removed"
                                                         : "the box's cgroup could not be read") +
                                 std::string(" at the final reading, and cgroup v") + version_text(record.version) +
                                 " keeps these counters only in the box's own cgroup";
    } else if (const auto parent_value = record.final_parent->value(source.key)) {
        values.final = *parent_value / source.divisor;
        values.final_source = "run_parent_after_exit";
    } else {
        values.no_final_reason = "they could be read neither in the box's cgroup nor in the run parent after the exit";
    }
    return values;
}

// "memory.failcnt could not be read in 2 of 5 readings of the box's cgroup", one per key.
void unreadable_key_errors(const WatchRecord& record, json::array& errors)
{
    std::vector<const Reading*> box_readings;
    for (const auto& sample : record.samples)
        if (!sample.gone) box_readings.push_back(&sample);
    if (record.final_box && !record.final_box->gone) box_readings.push_back(&*record.final_box);
    const bool parent_read = record.final_parent && !record.final_parent->gone;
    if (record.final_parent && record.final_parent->gone)
        errors.emplace_back("the run parent's cgroup was gone at the final reading");
    for (const auto& metric : k_metrics) {
        const auto& source = source_for(metric, record.version);
        if (!source) continue;
        const auto missing = std::count_if(box_readings.begin(), box_readings.end(),
                                           [&](const Reading* r) { return !r->value(source->key); });
        if (missing > 0)
            errors.emplace_back(std::string(source->key) + " could not be read in " + std::to_string(missing) +
                                " of " + std::to_string(box_readings.size()) + " readings of the box's cgroup");
        if (parent_read && metric.kind == Kind::counter && parent_holds(*source, *record.final_parent) &&
            !record.final_parent->value(source->key))
            errors.emplace_back(std::string(source->key) + " could not be read in the final reading of the run parent");
    }
    if (!record.end) errors.emplace_back(why_no_final(record));
}

// true once the counter is above zero; false only when its final value is zero.
json::value limit_hit(const MetricValues& values)
{
    if (values.max.value_or(0) > 0 || values.final.value_or(0) > 0) return true;
    if (values.final) return false;
    return nullptr;
}

std::string join_reasons(const std::map<std::string, std::vector<std::string_view>>& by_reason)
{
    std::string text;
    for (const auto& [reason, names] : by_reason) {
        if (!text.empty()) text += "; ";
        text += "only the last sampled value is known for ";
        for (std::size_t i = 0; i < names.size(); ++i) text += (i > 0 ? ", " : "") + std::string(names[i]);
        text += ": " + reason;
    }
    return text;
}

ResourceObservation summarize_record(const WatchRecord& record, const std::vector<std::string>& delivery_errors)
{
    ResourceObservation summary;
    auto& out = summary.resources;
    json::object metrics;
    std::map<std::string, MetricValues> by_name;
    std::map<std::string, std::vector<std::string_view>> missing_finals;
    bool any_value = false;
    for (const auto& metric : k_metrics) {
        const auto& source = source_for(metric, record.version);
        if (!source) continue;
        auto values = metric_values(metric, *source, record);
        any_value = any_value || values.last || values.final;
        if (metric.kind == Kind::counter && !values.final)
            missing_finals[values.no_final_reason].push_back(metric.name);
        metrics[metric.name] = json::object{
            {"first", or_null(values.first)},
            {"last", or_null(values.last)},
            {"max", or_null(values.max)},
            {"final", or_null(values.final)},
            {"final_source", values.final_source.empty() ? json::value(nullptr) : json::value(values.final_source)},
            {"kernel_file", source->key}};
        by_name.emplace(metric.name, std::move(values));
    }
    json::array errors;
    for (const auto& error : delivery_errors) errors.emplace_back(error);
    unreadable_key_errors(record, errors);
    const bool complete = missing_finals.empty();

    // COLLECTED once any value was read, as in the seed (its example has COLLECTED with
    // final_counters_complete false): final_counters_complete and errors say what is missing.
    out["status"] = any_value ? "COLLECTED" : "UNKNOWN";
    if (!any_value) {
        const bool no_reading = record.samples.empty() && !record.final_box;
        std::string reason = no_reading ? "the kernel watcher took no reading of the box's cgroup"
                                        : "the kernel watcher found no counter value: the box's cgroup was gone "
                                          "or unreadable at every reading and the run parent gave none";
        if (record.end) reason += " (it ended: " + std::string(to_string(*record.end)) + ")";
        out["reason"] = reason;
        summary.unknown.emplace_back("resources", reason);
    }
    out["source"] = source_text(record.version);
    out["cgroup_version"] = static_cast<int>(record.version);

    std::int64_t present = 0;
    for (const auto& sample : record.samples) present += sample.gone ? 0 : 1;
    const auto sample_count = static_cast<std::int64_t>(record.samples.size());
    out["sample_count"] = present;
    out["samples_box_gone"] = sample_count - present;
    out["start_cs"] = record.start_cs;
    const bool sampled = !record.samples.empty();
    out["ready_after_cs"] = sampled ? json::value(record.samples.front().time_cs - record.start_cs) : nullptr;
    out["first_sample_cs"] = sampled ? json::value(record.samples.front().time_cs) : nullptr;
    out["last_sample_cs"] = sampled ? json::value(record.samples.back().time_cs) : nullptr;
    out["final_cs"] = record.final_box ? json::value(record.final_box->time_cs) : nullptr;
    out["end"] = record.end ? json::value(to_string(*record.end)) : nullptr;
    out["final_counters_complete"] = complete;
    out["metrics"] = std::move(metrics);
    out["limits_hit"] = json::object{{"pids", limit_hit(by_name.at("pids.events.max"))},
                                     {"cpu_throttled", limit_hit(by_name.at("cpu.stat.nr_throttled"))},
                                     {"oom_kill", limit_hit(by_name.at("memory.events.oom_kill"))}};
    out["errors"] = std::move(errors);
    if (!complete) summary.unknown.emplace_back("final_resource_counters", join_reasons(missing_finals));
    std::string from_parent;
    for (const auto& [name, values] : by_name)
        if (values.final_source == "run_parent_after_exit") from_parent += (from_parent.empty() ? "" : ", ") + name;
    if (!from_parent.empty())
        summary.unknown.emplace_back(
            "box_own_counters",
            "the final " + from_parent +
                " are the run parent's, read after the box's cgroup was removed; the kernel also charges the run "
                "parent itself (on cgroup v1 here 200-256 KiB of memory before the program started), so they can "
                "exceed the box's own");
    return summary;
}

// `version`: the watcher's, when it ran; nullopt when no cgroup file was read.
ResourceObservation without_values(std::optional<CgroupVersion> version, std::string status, const std::string& reason,
                                   json::array errors)
{
    ResourceObservation summary;
    summary.resources = json::object{{"status", std::move(status)},
                                     {"reason", reason},
                                     {"source", version ? source_text(*version) : std::string(k_nothing_read_source)}};
    if (version) summary.resources["cgroup_version"] = static_cast<int>(*version);
    summary.resources["errors"] = std::move(errors);
    summary.unknown.emplace_back("resources", reason);
    summary.unknown.emplace_back("final_resource_counters", reason);
    return summary;
}

}  // namespace

ResourceObservation summarize_resources(const Expected<WatchRecord>& parsed, CgroupVersion version,
                                        const std::vector<std::string>& delivery_errors)
{
    if (!parsed) {
        json::array errors{json::value(parsed.error().message)};
        for (const auto& error : delivery_errors) errors.emplace_back(error);
        return without_values(version, "UNREADABLE",
                              "the kernel watcher's output was unreadable, so no counter is reported: " +
                                  parsed.error().message,
                              std::move(errors));
    }
    return summarize_record(*parsed, delivery_errors);
}

ResourceObservation resources_not_watched(const std::string& reason)
{
    return without_values(std::nullopt, "UNKNOWN", reason, json::array{});
}

}  // namespace pybox::watcher
