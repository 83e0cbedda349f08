// A box's reads of its node's kubelet summary and the receipt's observed.resources made of them
// (daemon/kube/kubelet_resources.hpp): one test per outcome.
#include "common/api_error_codes.hpp"
#include "daemon/kube/kubelet_resources.hpp"

#include <catch2/catch.hpp>

#include <boost/json/serialize.hpp>

#include <map>
#include <string>

using namespace pybox;
using namespace pybox::kube;
namespace json = boost::json;

namespace {

ContainerStats stats_at(const std::string& time, std::uint64_t cpu_ns, std::uint64_t working_set)
{
    return ContainerStats{time, cpu_ns, time, working_set, working_set + 4096, working_set - 4096};
}

Expected<std::optional<ContainerStats>> read_found(ContainerStats stats) { return std::optional<ContainerStats>(std::move(stats)); }
Expected<std::optional<ContainerStats>> read_none() { return std::optional<ContainerStats>(); }
Expected<std::optional<ContainerStats>> read_failed(const std::string& why)
{
    return make_error(api_error::k_engine_error, why);
}

SummaryReads summary_reads(std::initializer_list<Expected<std::optional<ContainerStats>>> answers)
{
    SummaryReads reads;
    reads.node = "node-1";
    for (const auto& answer : answers) reads.add(answer);
    return reads;
}

std::map<std::string, std::string> unknown_keys_of(const ResourceObservation& resources)
{
    return {resources.unknown.begin(), resources.unknown.end()};
}

const json::object& sampled_metric(const ResourceObservation& resources, std::string_view name)
{
    return resources.resources.at("metrics").as_object().at(name).as_object();
}

}  // namespace

TEST_CASE("Reads that found the container's entry give lower bounds with the samples' own times, never final values")
{
    const auto resources = sampled_resources(summary_reads({read_none(), read_found(stats_at("2026-12-06T11:08:30Z", 14'000'000, 1'200'000)),
                                                       read_found(stats_at("2026-12-06T11:08:30Z", 14'000'000, 1'200'000)),
                                                       read_found(stats_at("2026-12-06T11:08:42Z", 5'800'000'000, 9'000'000)),
                                                       read_found(stats_at("2026-12-06T11:08:55Z", 9'100'000'000, 5'000'000))}));
    const auto& out = resources.resources;
    INFO(json::serialize(out));
    CHECK(out.at("status") == "COLLECTED");
    CHECK(out.at("node") == "node-1");
    CHECK(out.at("final_counters_complete") == false);
    CHECK(out.at("sample_count") == 3);
    CHECK(out.at("reads") == json::object{{"with_entry", 4}, {"without_entry", 1}, {"failed", 0}});
    CHECK(out.at("errors").as_array().empty());
    CHECK_THAT(std::string(out.at("source").as_string()),
               Catch::Contains("kubelet's summary API of the node node-1") &&
                   Catch::Contains("/api/v1/nodes/node-1/proxy/stats/summary through the apiserver"));
    CHECK_FALSE(out.contains("reason"));

    const auto& cpu = sampled_metric(resources, "cpu.stat.usage_usec");
    CHECK(cpu.at("first") == 14'000);
    CHECK(cpu.at("last") == 9'100'000);
    CHECK(cpu.at("max") == 9'100'000);
    CHECK(cpu.at("final").is_null());
    CHECK(cpu.at("final_source").is_null());
    CHECK(cpu.at("summary_field") == "cpu.usageCoreNanoSeconds");
    CHECK(cpu.at("first_time") == "2026-12-06T11:08:30Z");
    CHECK(cpu.at("last_time") == "2026-12-06T11:08:55Z");
    // Memory is a gauge: its highest sample is kept apart from its last.
    const auto& working_set = sampled_metric(resources, "memory.working_set");
    CHECK(working_set.at("last") == 5'000'000);
    CHECK(working_set.at("max") == 9'000'000);
    CHECK(working_set.at("summary_field") == "memory.workingSetBytes");
    CHECK(sampled_metric(resources, "memory.current").at("max") == 9'004'096);
    CHECK(sampled_metric(resources, "memory.stat.rss").at("last") == 4'995'904);

    const auto unknown = unknown_keys_of(resources);
    CHECK_FALSE(unknown.contains("resources"));
    CHECK_THAT(unknown.at("final_resource_counters"),
               Catch::Contains("latest at 2026-12-06T11:08:55Z") && Catch::Contains("keeps no entry for a container once it ended") &&
                   Catch::Contains("lower bound"));
}

TEST_CASE("A figure the kubelet never gave is null in a collected summary")
{
    ContainerStats cpu_only;
    cpu_only.cpu_time = "2026-12-06T11:08:30Z";
    cpu_only.usage_core_nanoseconds = 2'000;
    const auto resources = sampled_resources(summary_reads({read_found(cpu_only)}));
    CHECK(resources.resources.at("status") == "COLLECTED");
    CHECK(sampled_metric(resources, "cpu.stat.usage_usec").at("last") == 2);
    const auto& memory = sampled_metric(resources, "memory.current");
    CHECK(memory.at("first").is_null());
    CHECK(memory.at("last").is_null());
    CHECK(memory.at("max").is_null());
    CHECK(memory.at("last_time").is_null());
}

TEST_CASE("Failed reads beside samples are counted and named in errors")
{
    const auto resources = sampled_resources(
        summary_reads({read_failed("GET /api/v1/nodes/node-1/proxy/stats/summary: 503"), read_found(stats_at("2026-12-06T11:08:30Z", 1'000, 8'192))}));
    CHECK(resources.resources.at("status") == "COLLECTED");
    CHECK(resources.resources.at("reads") == json::object{{"with_entry", 1}, {"without_entry", 0}, {"failed", 1}});
    const auto& errors = resources.resources.at("errors").as_array();
    REQUIRE(errors.size() == 1);
    CHECK_THAT(std::string(errors[0].as_string()), Catch::Contains("1 of the 2 reads (1 failed)") && Catch::Contains("503"));
}

TEST_CASE("A box that ended before any read was answered has resources UNKNOWN, saying so")
{
    const auto resources = sampled_resources(summary_reads({}));
    CHECK(resources.resources.at("status") == "UNKNOWN");
    const std::string reason(resources.resources.at("reason").as_string());
    CHECK_THAT(reason, Catch::Contains("the box ended before a read of the kubelet's summary of the node node-1"));
    const auto unknown = unknown_keys_of(resources);
    CHECK(unknown.at("resources") == reason);
    CHECK(unknown.at("final_resource_counters") == reason);
    CHECK_FALSE(resources.resources.contains("metrics"));
}

TEST_CASE("Reads that all failed leave resources UNKNOWN with the last failure's words")
{
    const auto resources = sampled_resources(summary_reads({read_failed("first"), read_failed("nodes \"node-1\" is forbidden: get nodes/proxy")}));
    CHECK(resources.resources.at("status") == "UNKNOWN");
    CHECK_THAT(std::string(resources.resources.at("reason").as_string()),
               Catch::Contains("every read") && Catch::Contains("2 reads (2 failed)") &&
                   Catch::EndsWith("the last: nodes \"node-1\" is forbidden: get nodes/proxy"));
    CHECK(resources.resources.at("reads") == json::object{{"with_entry", 0}, {"without_entry", 0}, {"failed", 2}});
}

TEST_CASE("Summaries without the container's entry leave resources UNKNOWN, saying how many were read")
{
    const auto resources = sampled_resources(summary_reads({read_none(), read_failed("timeout"), read_none()}));
    CHECK(resources.resources.at("status") == "UNKNOWN");
    CHECK_THAT(std::string(resources.resources.at("reason").as_string()),
               Catch::Contains("had no entry for the box's container in any of the 3 reads (1 failed)"));
    CHECK(unknown_keys_of(resources).contains("resources"));
}
