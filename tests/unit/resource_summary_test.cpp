#include "daemon/watcher/resource_summary.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

using namespace pybox;
using watcher::CgroupVersion;
using watcher::Reading;
using watcher::WatchEnd;
using watcher::WatchRecord;
namespace json = boost::json;

namespace {

// A reading of a present cgroup: every key of the version is `fill` unless overridden
// (nullopt in overrides: unreadable).
Reading reading(CgroupVersion version, std::int64_t time_cs, std::int64_t fill,
                const std::map<std::string, watcher::CounterValue>& overrides = {})
{
    Reading r;
    r.time_cs = time_cs;
    for (const auto key : watcher::watch_keys(version)) r.values[std::string(key)] = fill;
    for (const auto& [key, value] : overrides) r.values[key] = value;
    return r;
}

Reading gone(std::int64_t time_cs)
{
    Reading r;
    r.time_cs = time_cs;
    r.gone = true;
    return r;
}

// Two samples of the box, then the given final readings and end.
WatchRecord record(CgroupVersion version, std::optional<Reading> final_box, std::optional<Reading> final_parent,
                   std::optional<WatchEnd> end)
{
    WatchRecord r;
    r.version = version;
    r.start_cs = 100;
    r.samples = {reading(version, 101, 3000), reading(version, 106, 5000)};
    r.final_box = std::move(final_box);
    r.final_parent = std::move(final_parent);
    r.end = end;
    return r;
}

WatchRecord finished(CgroupVersion version, Reading final_box)
{
    return record(version, std::move(final_box), reading(version, 130, 9000, {{"pids.current", 0}}), WatchEnd::final);
}

ResourceObservation summarize(const WatchRecord& r) { return watcher::summarize_resources(r, r.version); }

const json::object& metric(const ResourceObservation& s, std::string_view name)
{
    return s.resources.at("metrics").as_object().at(name).as_object();
}

std::string unknown_reason(const ResourceObservation& s, std::string_view key)
{
    for (const auto& [name, why] : s.unknown)
        if (name == key) return why;
    return {};
}

// The counters whose final value came from the run parent.
std::set<std::string> finals_from_parent(const ResourceObservation& s)
{
    std::set<std::string> names;
    for (const auto& [name, value] : s.resources.at("metrics").as_object())
        if (value.as_object().at("final_source") == "run_parent_after_exit") names.insert(std::string(name));
    return names;
}

}  // namespace

TEST_CASE("A final reading of the box's own cgroup gives every counter its final value: COLLECTED")
{
    const auto s = summarize(finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 8000)));
    CHECK(s.resources.at("status") == "COLLECTED");
    CHECK(s.resources.at("final_counters_complete") == true);
    CHECK(metric(s, "memory.peak").at("final") == 8000);
    CHECK(metric(s, "memory.peak").at("final_source") == "box_cgroup_after_exit");
    CHECK(metric(s, "memory.events.oom_kill").at("final") == 8000);
    CHECK(s.resources.at("errors").as_array().empty());
    CHECK(s.unknown.empty());
}

TEST_CASE("v1 CPU times in nanoseconds are reported in microseconds")
{
    const auto s = summarize(finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 8000)));
    CHECK(metric(s, "cpu.stat.usage_usec").at("final") == 8);
    CHECK(metric(s, "cpu.stat.usage_usec").at("last") == 5);
    CHECK(metric(s, "cpu.stat.usage_usec").at("kernel_file") == "cpuacct.usage");
    CHECK(metric(s, "cpu.stat.throttled_usec").at("final") == 8);
}

TEST_CASE("First, last and max come from the box's samples; gauges have no final value")
{
    const auto s = summarize(finished(CgroupVersion::v2, reading(CgroupVersion::v2, 130, 8000)));
    const auto& memory = metric(s, "memory.current");
    CHECK(memory.at("first") == 3000);  // the earliest sample
    CHECK(memory.at("last") == 5000);
    CHECK(memory.at("max") == 5000);
    CHECK(memory.at("final").is_null());
    CHECK(memory.at("final_source").is_null());
    CHECK(metric(s, "pids.current").at("final").is_null());
    CHECK(s.resources.at("sample_count") == 2);
    CHECK(s.resources.at("ready_after_cs") == 1);
    CHECK(s.resources.at("first_sample_cs") == 101);
    CHECK(s.resources.at("last_sample_cs") == 106);
    CHECK(s.resources.at("final_cs") == 130);
    CHECK(s.resources.at("end") == "final");
}

TEST_CASE("Metrics are named by their cgroup v2 file on both versions; a v1-only counter keeps its v1 name")
{
    const auto v1 = summarize(finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 1)));
    const auto v2 = summarize(finished(CgroupVersion::v2, reading(CgroupVersion::v2, 130, 1)));
    CHECK(v1.resources.at("metrics").as_object().contains("memory.memsw.max_usage_in_bytes"));
    CHECK_FALSE(v1.resources.at("metrics").as_object().contains("memory.events.oom"));
    CHECK(v2.resources.at("metrics").as_object().contains("memory.swap.peak"));
    CHECK(v2.resources.at("metrics").as_object().contains("memory.events.oom"));
    CHECK(metric(v2, "cpu.stat.usage_usec").at("final") == 1);
    // The file actually read is kept as evidence.
    CHECK(metric(v1, "memory.peak").at("kernel_file") == "memory.max_usage_in_bytes");
    CHECK(metric(v2, "memory.peak").at("kernel_file") == "memory.peak");
    CHECK(metric(v1, "memory.events.oom_kill").at("kernel_file") == "memory.oom_control.oom_kill");
    CHECK(metric(v1, "cpu.stat.throttled_usec").at("kernel_file") == "cpu.stat.throttled_time");
    CHECK(metric(v1, "memory.current").at("kernel_file") == "memory.usage_in_bytes");
    CHECK(metric(v1, "memory.memsw.max_usage_in_bytes").at("kernel_file") == "memory.memsw.max_usage_in_bytes");
    const std::set<std::string> v1_names{"memory.current", "memory.peak", "memory.memsw.usage_in_bytes",
                                         "memory.memsw.max_usage_in_bytes", "memory.events.oom_kill",
                                         "cpu.stat.usage_usec", "cpu.stat.user_usec", "cpu.stat.system_usec",
                                         "cpu.stat.nr_periods", "cpu.stat.nr_throttled", "cpu.stat.throttled_usec",
                                         "pids.current", "pids.peak", "pids.events.max"};
    const std::set<std::string> v2_names{"memory.current", "memory.peak", "memory.swap.current", "memory.swap.peak",
                                         "memory.events.max", "memory.events.oom", "memory.events.oom_kill",
                                         "cpu.stat.usage_usec", "cpu.stat.user_usec", "cpu.stat.system_usec",
                                         "cpu.stat.nr_periods", "cpu.stat.nr_throttled", "cpu.stat.throttled_usec",
                                         "pids.current", "pids.peak", "pids.events.max"};
    const auto names_of = [](const ResourceObservation& s) {
        std::set<std::string> names;
        for (const auto& [name, value] : s.resources.at("metrics").as_object()) names.insert(std::string(name));
        return names;
    };
    CHECK(names_of(v1) == v1_names);
    CHECK(names_of(v2) == v2_names);
}

TEST_CASE("v1 with the box's cgroup gone: only the hierarchical counters are final, from the run parent")
{
    const auto s = summarize(finished(CgroupVersion::v1, gone(130)));
    CHECK(finals_from_parent(s) == std::set<std::string>{"memory.peak", "memory.memsw.max_usage_in_bytes",
                                                         "cpu.stat.usage_usec", "cpu.stat.user_usec", "cpu.stat.system_usec",
                                                         "pids.peak"});
    CHECK(metric(s, "memory.peak").at("final") == 9000);
    CHECK(metric(s, "memory.events.oom_kill").at("final").is_null());
    CHECK(metric(s, "memory.events.oom_kill").at("last") == 5000);
    CHECK(s.resources.at("status") == "COLLECTED");
    CHECK(s.resources.at("final_counters_complete") == false);
    const auto why = unknown_reason(s, "final_resource_counters");
    CHECK_THAT(why, Catch::Contains("memory.events.oom_kill, cpu.stat.nr_throttled, cpu.stat.throttled_usec, pids.events.max"));
    CHECK_THAT(why, Catch::Contains("only in the box's own cgroup"));
}

TEST_CASE("v2 with the box's cgroup gone: the run parent gives all but throttling and, on older kernels, pids events")
{
    const auto s = summarize(finished(CgroupVersion::v2, gone(130)));
    CHECK(finals_from_parent(s) == std::set<std::string>{"memory.peak", "memory.swap.peak", "memory.events.max",
                                                         "memory.events.oom", "memory.events.oom_kill", "cpu.stat.usage_usec", "cpu.stat.user_usec",
                                                         "cpu.stat.system_usec", "pids.peak", "pids.events.max"});
    auto old_kernel = finished(CgroupVersion::v2, gone(130));
    old_kernel.final_parent->values["pids.events.local.max"] = std::nullopt;
    const auto without_local = summarize(old_kernel);
    CHECK(metric(without_local, "pids.events.max").at("final").is_null());
    CHECK(metric(without_local, "memory.events.oom_kill").at("final_source") == "run_parent_after_exit");
    CHECK_THAT(unknown_reason(without_local, "final_resource_counters"),
               Catch::Contains("for cpu.stat.nr_throttled, cpu.stat.throttled_usec, pids.events.max"));
}

TEST_CASE("A counter unreadable in the box's final reading falls back to the run parent where it is hierarchical")
{
    const auto s = summarize(
        finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 8000, {{"cpuacct.usage", std::nullopt}})));
    CHECK(metric(s, "cpu.stat.usage_usec").at("final") == 9);
    CHECK(metric(s, "cpu.stat.usage_usec").at("final_source") == "run_parent_after_exit");
    CHECK(s.resources.at("status") == "COLLECTED");
    CHECK_THAT(json::serialize(s.resources.at("errors")),
               Catch::Contains("cpuacct.usage could not be read in 1 of 3 readings of the box's cgroup"));
}

TEST_CASE("Without a final reading every counter keeps only its last value, and the reason says why")
{
    const auto s = summarize(record(CgroupVersion::v1, std::nullopt, std::nullopt, WatchEnd::wait_timeout));
    CHECK(s.resources.at("status") == "COLLECTED");
    CHECK(metric(s, "pids.peak").at("final").is_null());
    CHECK(metric(s, "pids.peak").at("last") == 5000);
    CHECK_THAT(unknown_reason(s, "final_resource_counters"), Catch::Contains("still held a task"));
    const auto timed_out = summarize(record(CgroupVersion::v1, std::nullopt, std::nullopt, WatchEnd::time));
    CHECK_THAT(unknown_reason(timed_out, "final_resource_counters"), Catch::Contains("time limit"));
}

TEST_CASE("Output that stopped before its end line is COLLECTED with an error, and its finals incomplete")
{
    const auto s = summarize(record(CgroupVersion::v2, std::nullopt, std::nullopt, std::nullopt));
    CHECK(s.resources.at("status") == "COLLECTED");
    CHECK(s.resources.at("end").is_null());
    CHECK(s.resources.at("final_counters_complete") == false);
    CHECK_THAT(json::serialize(s.resources.at("errors")), Catch::Contains("before its end line"));
}

TEST_CASE("A run parent gone at the final reading is an error and gives no final value")
{
    auto r = finished(CgroupVersion::v1, gone(130));
    r.final_parent = gone(130);
    const auto s = summarize(r);
    CHECK(finals_from_parent(s).empty());
    CHECK_THAT(json::serialize(s.resources.at("errors")), Catch::Contains("run parent's cgroup was gone"));
}

TEST_CASE("Output that broke the format is UNREADABLE, and the reason is repeated in unknown")
{
    const Expected<WatchRecord> broken = make_error("watch_output_invalid", "watcher output: line 3: duplicate key x.");
    const auto s = watcher::summarize_resources(broken, CgroupVersion::v2);
    CHECK(s.resources.at("status") == "UNREADABLE");
    CHECK(s.resources.at("cgroup_version") == 2);
    CHECK(s.resources.at("errors").as_array().at(0) == "watcher output: line 3: duplicate key x.");
    CHECK_THAT(unknown_reason(s, "resources"), Catch::Contains("unreadable") && Catch::Contains("line 3"));
    CHECK_FALSE(unknown_reason(s, "final_resource_counters").empty());
}

TEST_CASE("A watcher that read no value at all is UNKNOWN")
{
    WatchRecord r;
    r.samples = {gone(101), gone(102)};
    r.end = WatchEnd::signal;
    const auto s = summarize(r);
    CHECK(s.resources.at("status") == "UNKNOWN");
    CHECK(s.resources.at("sample_count") == 0);
    CHECK(s.resources.at("samples_box_gone") == 2);
    CHECK_THAT(unknown_reason(s, "resources"), Catch::Contains("gone or unreadable"));
    WatchRecord empty;
    CHECK_THAT(unknown_reason(summarize(empty), "resources"), Catch::Contains("took no reading"));
}

TEST_CASE("A box gone at every sample still gets the run parent's final totals: COLLECTED")
{
    auto r = finished(CgroupVersion::v1, gone(130));
    r.samples = {gone(101)};
    const auto s = summarize(r);
    CHECK(s.resources.at("status") == "COLLECTED");
    CHECK(metric(s, "pids.peak").at("final") == 9000);
    CHECK(metric(s, "pids.peak").at("last").is_null());
}

TEST_CASE("A run that was not watched is UNKNOWN with the reason")
{
    const auto s = watcher::resources_not_watched("the program never started");
    CHECK(s.resources.at("status") == "UNKNOWN");
    CHECK(s.resources.at("source").as_string() == watcher::k_nothing_read_source);  // not the watcher's, which never read
    CHECK_FALSE(s.resources.contains("cgroup_version"));
    CHECK(s.resources.at("reason") == "the program never started");
    CHECK(unknown_reason(s, "resources") == "the program never started");
}

TEST_CASE("A limit counts as hit once its counter is above zero, even without a final value")
{
    auto r = record(CgroupVersion::v1, std::nullopt, std::nullopt, WatchEnd::time);
    for (auto& sample : r.samples) sample.values["memory.oom_control.oom_kill"] = 0;
    r.samples.back().values["pids.events.max"] = 1;
    const auto s = summarize(r);
    const auto& hits = s.resources.at("limits_hit").as_object();
    CHECK(hits.at("pids") == true);
    CHECK(hits.at("oom_kill").is_null());  // zero so far, but the final value is unknown
}

TEST_CASE("A limit counts as not hit only when its final value is zero")
{
    auto r = finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 0, {{"cpu.stat.nr_throttled", 4}}));
    r.samples = {reading(CgroupVersion::v1, 101, 0)};
    const auto s = summarize(r);
    const auto& hits = s.resources.at("limits_hit").as_object();
    CHECK(hits.at("cpu_throttled") == true);
    CHECK(hits.at("oom_kill") == false);
    CHECK(hits.at("pids") == false);
}

TEST_CASE("Trouble delivering the output is listed in errors; the status stays COLLECTED, as in the seed")
{
    const auto r = finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 8000));
    const auto s = watcher::summarize_resources(r, r.version, {"the watcher did not end in time and was killed"});
    CHECK(s.resources.at("status") == "COLLECTED");
    CHECK(s.resources.at("final_counters_complete") == true);
    CHECK(s.resources.at("errors").as_array().front() == "the watcher did not end in time and was killed");
}

TEST_CASE("CPU periods are only sampled: the kernel's period timer still counts after the last task ended")
{
    const auto s = summarize(finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 8000)));
    CHECK(metric(s, "cpu.stat.nr_periods").at("final").is_null());
    CHECK(metric(s, "cpu.stat.nr_periods").at("final_source").is_null());
    CHECK(s.resources.at("final_counters_complete") == true);
}

TEST_CASE("On cgroup v1 the memory limit's hits are not reported, since the kernel left them at 0 through an OOM kill")
{
    const auto s = summarize(finished(CgroupVersion::v1, gone(130)));
    CHECK_FALSE(s.resources.at("metrics").as_object().contains("memory.events.max"));
}

TEST_CASE("Final counters taken from the run parent say they are the parent's, not the box's own")
{
    const auto from_parent = summarize(finished(CgroupVersion::v1, gone(130)));
    CHECK_THAT(unknown_reason(from_parent, "box_own_counters"),
               Catch::Contains("memory.peak") && Catch::Contains("the run parent's"));
    const auto own = summarize(finished(CgroupVersion::v1, reading(CgroupVersion::v1, 130, 8000)));
    CHECK(unknown_reason(own, "box_own_counters").empty());
}
