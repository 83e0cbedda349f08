// The kubelet's summary read for one container of one Pod (daemon/kube/kubelet_summary.hpp): a
// summary captured from the test cluster (Kubernetes 1.20, only_cpu_and_memory=true), and what
// the strict reader refuses.
#include "daemon/kube/kube_limits.hpp"
#include "daemon/kube/kubelet_summary.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox::kube;

namespace {

const SummaryPod k_summary_pod{"pybox-test", "sumprobe", "cc8e8b8b-7a39-4a52-9504-2a3022449b09"};

// The container's entry of a captured summary, with `box` in place of its container entry.
std::string summary_with(const std::string& box, const std::string& pod_ref = R"({"name":"sumprobe","namespace":"pybox-test","uid":"cc8e8b8b-7a39-4a52-9504-2a3022449b09"})")
{
    return R"({"node":{"nodeName":"pybox-k8s-node","systemContainers":[{"name":"pods","startTime":"2026-12-06T10:57:01Z",)"
           R"("cpu":{"time":"2026-12-06T11:08:42Z","usageNanoCores":100328703,"usageCoreNanoSeconds":1307249911},)"
           R"("memory":{"time":"2026-12-06T11:08:42Z","availableBytes":25264746496,"usageBytes":11448320,)"
           R"("workingSetBytes":11448320,"rssBytes":10862592,"pageFaults":0,"majorPageFaults":0}}],)"
           R"("startTime":"2026-12-06T07:52:31Z","cpu":{"time":"2026-12-06T11:08:42Z","usageNanoCores":1997666953,)"
           R"("usageCoreNanoSeconds":21184202615198},"memory":{"time":"2026-12-06T11:08:42Z","availableBytes":8993423360,)"
           R"("usageBytes":23787307008,"workingSetBytes":16282771456,"rssBytes":9008275456,"pageFaults":351337,)"
           R"("majorPageFaults":0}},"pods":[{"podRef":)" + pod_ref +
           R"(,"startTime":"2026-12-06T11:08:29Z","containers":[)" + box +
           R"(],"cpu":{"time":"2026-12-06T11:08:41Z","usageNanoCores":96635451,"usageCoreNanoSeconds":1198758388},)"
           R"("memory":{"time":"2026-12-06T11:08:41Z","availableBytes":55693312,"usageBytes":11415552,)"
           R"("workingSetBytes":11415552,"rssBytes":10862592,"pageFaults":0,"majorPageFaults":0}}]})";
}

const std::string k_box_entry =
    R"({"name":"box","startTime":"2026-12-06T11:08:30Z","cpu":{"time":"2026-12-06T11:08:48Z","usageNanoCores":95938242,)"
    R"("usageCoreNanoSeconds":1767341398},"memory":{"time":"2026-12-06T11:08:48Z","availableBytes":56029184,)"
    R"("usageBytes":11079680,"workingSetBytes":11079680,"rssBytes":10813440,"pageFaults":3519,"majorPageFaults":0}})";

std::string summary_refusal(const std::string& body)
{
    const auto read = container_stats(body, k_summary_pod, "box");
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().code == "engine_protocol");
    return read.error().message;
}

bool has_entry(const std::string& body, const SummaryPod& pod = k_summary_pod)
{
    const auto read = container_stats(body, pod, "box");
    REQUIRE(read.has_value());
    return read->has_value();
}

}  // namespace

TEST_CASE("A captured summary gives the box container's CPU and memory figures with their sample times")
{
    const auto read = container_stats(summary_with(k_box_entry), k_summary_pod, "box");
    REQUIRE(read.has_value());
    REQUIRE(read->has_value());
    const auto& stats = **read;
    CHECK(stats.cpu_time == "2026-12-06T11:08:48Z");
    CHECK(stats.usage_core_nanoseconds == 1767341398u);
    CHECK(stats.memory_time == "2026-12-06T11:08:48Z");
    CHECK(stats.working_set_bytes == 11079680u);
    CHECK(stats.usage_bytes == 11079680u);
    CHECK(stats.rss_bytes == 10813440u);
}

TEST_CASE("The Pod is matched by namespace, name and UID: another UID of the same name has no entry")
{
    CHECK_FALSE(has_entry(summary_with(k_box_entry), SummaryPod{"pybox-test", "sumprobe", "another-uid"}));
    CHECK_FALSE(has_entry(summary_with(k_box_entry), SummaryPod{"other", "sumprobe", k_summary_pod.uid}));
    CHECK_FALSE(has_entry(summary_with(k_box_entry), SummaryPod{"pybox-test", "other", k_summary_pod.uid}));
}

TEST_CASE("A Pod without the container, or with no containers yet, has no entry")
{
    const std::string other = R"({"name":"sidecar","cpu":{"time":"2026-12-06T11:08:48Z","usageCoreNanoSeconds":5}})";
    CHECK_FALSE(has_entry(summary_with(other), k_summary_pod));
    CHECK_FALSE(has_entry(summary_with(""), k_summary_pod));
    CHECK_FALSE(has_entry(R"({"node":{},"pods":null})", k_summary_pod));
    CHECK_FALSE(has_entry(R"({"node":{}})", k_summary_pod));
}

TEST_CASE("Figures and objects the kubelet left out or null are absent, not errors")
{
    const auto read = container_stats(
        summary_with(R"({"name":"box","cpu":{"time":"2026-12-06T11:08:30Z","usageCoreNanoSeconds":null},"memory":null})"),
        k_summary_pod, "box");
    REQUIRE(read.has_value());
    REQUIRE(read->has_value());
    CHECK((*read)->cpu_time == "2026-12-06T11:08:30Z");
    CHECK_FALSE((*read)->usage_core_nanoseconds);
    CHECK_FALSE((*read)->memory_time);
    CHECK_FALSE((*read)->working_set_bytes);
    const auto bare = container_stats(summary_with(R"({"name":"box"})"), k_summary_pod, "box");
    REQUIRE(bare.has_value());
    CHECK(**bare == ContainerStats{});
}

TEST_CASE("A summary that is not JSON, repeats a key or nests too deep is refused")
{
    CHECK_THAT(summary_refusal(summary_with(k_box_entry).substr(10)), Catch::Contains("is not JSON"));
    CHECK_THAT(summary_refusal(summary_with(k_box_entry) + "{}"), Catch::Contains("is not JSON"));
    CHECK_THAT(summary_refusal(R"({"pods":[],"pods":[]})"), Catch::Contains("repeats the key \"pods\""));
    CHECK_THAT(summary_refusal(std::string(k_summary_depth + 1, '[') + std::string(k_summary_depth + 1, ']')),
               Catch::Contains("is not JSON"));
    CHECK_THAT(summary_refusal("[]"), Catch::Contains("is not a JSON object"));
}

TEST_CASE("A summary over the bound is refused before it is parsed")
{
    const std::string body = summary_with(k_box_entry);
    const std::string padded = body.substr(0, body.size() - 1) + R"(,"pad":")" +
                               std::string(k_max_kubelet_summary_bytes - body.size(), 'x') + "\"}";
    REQUIRE(padded.size() > k_max_kubelet_summary_bytes);
    CHECK_THAT(summary_refusal(padded), Catch::Contains("larger than " + std::to_string(k_max_kubelet_summary_bytes)));
}

TEST_CASE("A field the reader uses with the wrong type is refused")
{
    CHECK_THAT(summary_refusal(R"({"pods":{}})"), Catch::Contains("pods"));
    CHECK_THAT(summary_refusal(R"({"pods":[{"podRef":{"name":"a","namespace":"b"}}]})"), Catch::Contains("uid"));
    CHECK_THAT(summary_refusal(R"({"pods":[{"podRef":{"name":1,"namespace":"b","uid":"c"}}]})"), Catch::Contains("name"));
    CHECK_THAT(summary_refusal(summary_with(R"({"name":"box","cpu":{"time":"2026-12-06T11:08:30Z","usageCoreNanoSeconds":-1}})")),
               Catch::Contains("usageCoreNanoSeconds"));
    CHECK_THAT(summary_refusal(summary_with(R"({"name":"box","cpu":{"time":"2026-12-06T11:08:30Z","usageCoreNanoSeconds":1.5}})")),
               Catch::Contains("usageCoreNanoSeconds"));
    CHECK_THAT(summary_refusal(summary_with(R"({"name":"box","memory":{"time":"yesterday"}})")), Catch::Contains("RFC 3339"));
    CHECK_THAT(summary_refusal(summary_with(R"({"name":"box","memory":[]})")), Catch::Contains("memory"));
    CHECK_THAT(summary_refusal(summary_with(R"({"cpu":{}})")), Catch::Contains("name"));
}

TEST_CASE("A Pod or container listed twice is refused as ambiguous")
{
    CHECK_THAT(summary_refusal(summary_with(k_box_entry + "," + k_box_entry)), Catch::Contains("container box of the Pod twice"));
    const std::string pod = R"({"podRef":{"name":"sumprobe","namespace":"pybox-test","uid":")" + k_summary_pod.uid + R"("}})";
    CHECK_THAT(summary_refusal(R"({"pods":[)" + pod + "," + pod + "]}"), Catch::Contains("lists the Pod pybox-test/sumprobe twice"));
}

TEST_CASE("The summary is asked of the node's kubelet through the apiserver's node proxy, CPU and memory only")
{
    CHECK(summary_path("pybox-k8s-node") == "/api/v1/nodes/pybox-k8s-node/proxy/stats/summary?only_cpu_and_memory=true");
}
