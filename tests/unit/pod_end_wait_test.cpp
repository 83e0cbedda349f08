// The end wait of a cluster box (daemon/kube/pod_end_wait.hpp) against a scripted apiserver: one
// read of the Pod, then watches from its version, opened again where they close, a fresh read
// after a 410 or an unreadable event, reads every interval when the watch is refused, and the
// version that showed the end handed over.
#include "daemon/kube/pod_end_wait.hpp"
#include "tests/support/kube_test_access.hpp"
#include "tests/support/scripted_model_server.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <deque>
#include <optional>
#include <string>
#include <vector>

using namespace pybox;
using namespace pybox::kube;
using namespace std::chrono_literals;
using test::access_to;
using test::run_kube;
using test::ScriptedAnswer;
using test::ScriptedModelServer;

namespace {

namespace json = boost::json;

constexpr const char* k_end_uid = "79f2a748-1f27-4c7c-8a5c-bcbb44428406";
constexpr const char* k_pods = "/api/v1/namespaces/pybox-test/pods";

// A version of the Pod: its box container running, or terminated with exit code 0.
json::value pod_version(const std::string& version, bool terminated, const std::string& uid = k_end_uid)
{
    const json::value state = terminated ? json::value{{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}
                                         : json::value{{"running", {{"startedAt", "2026-12-06T11:08:46Z"}}}};
    return json::object{
        {"kind", "Pod"},
        {"apiVersion", "v1"},
        {"metadata", {{"name", "pybox-run"}, {"namespace", "pybox-test"}, {"uid", uid}, {"resourceVersion", version}}},
        {"status", {{"phase", terminated ? "Succeeded" : "Running"},
                    {"containerStatuses", json::array{{{"name", "box"}, {"state", state}}}}}}};
}

std::string event(const std::string& type, const json::value& object)
{
    return json::serialize(json::object{{"type", type}, {"object", object}}) + "\n";
}

ScriptedAnswer watch_answer(const std::string& lines)
{
    ScriptedAnswer answer(200, lines);
    answer.chunked = true;
    return answer;
}

// A wait on the scripted apiserver whose reads of the Pod answer `reads` in turn.
struct Waiting {
    explicit Waiting(std::vector<ScriptedAnswer> watches, std::deque<json::value> pod_reads)
        : server("localhost", std::move(watches)), client(KubeClient::make(access_to(server.port())).value()),
          reads(std::move(pod_reads))
    {
    }

    Expected<void> wait(Timeout timeout = 10s)
    {
        PodEndWait end([this]() -> Expected<KubeClient*> { return client.get(); },
                       [this](Timeout) -> net::awaitable<Expected<json::value>> {
                           ++read_count;
                           REQUIRE_FALSE(reads.empty());
                           auto pod = std::move(reads.front());
                           reads.pop_front();
                           co_return pod;
                       },
                       k_pods, PodRef{"pybox-run", k_end_uid}, [this](json::value pod) { ended_pod = std::move(pod); });
        return run_kube(end.ended(timeout));
    }

    // The resourceVersion each watch asked for.
    std::vector<std::string> watched_from() const
    {
        std::vector<std::string> versions;
        for (const auto& request : server.requests()) {
            const auto at = request.target.find("&resourceVersion=");
            const auto end = request.target.find('&', at + 1);
            versions.push_back(request.target.substr(at + 17, end - at - 17));
        }
        return versions;
    }

    ScriptedModelServer server;
    std::unique_ptr<KubeClient> client;
    std::deque<json::value> reads;
    int read_count = 0;
    std::optional<json::value> ended_pod;
};

}  // namespace

TEST_CASE("The end wait reads the Pod once, watches it from that version, and ends at the first version that shows "
          "the end",
          "[kube_watch]")
{
    Waiting waiting({watch_answer(event("MODIFIED", pod_version("11", false)) + event("MODIFIED", pod_version("12", true)))},
                    {pod_version("10", false)});
    REQUIRE(waiting.wait().has_value());
    CHECK(waiting.read_count == 1);
    const auto requests = waiting.server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].method == "GET");
    CHECK(requests[0].target == std::string(k_pods) + "?watch=1&fieldSelector=metadata.name%3Dpybox-run" +
                                    "&resourceVersion=10&timeoutSeconds=" + std::to_string(k_pod_watch_seconds.count()));
    REQUIRE(waiting.ended_pod.has_value());
    CHECK(*waiting.ended_pod == pod_version("12", true));
}

TEST_CASE("A Pod read already ended ends the wait without a watch", "[kube_watch]")
{
    Waiting waiting({}, {pod_version("10", true)});
    REQUIRE(waiting.wait().has_value());
    CHECK(waiting.server.requests().empty());
    CHECK(waiting.ended_pod == std::optional<json::value>(pod_version("10", true)));
}

TEST_CASE("A watch that closes is opened again from the last version it showed", "[kube_watch]")
{
    Waiting waiting({watch_answer(event("MODIFIED", pod_version("11", false))), watch_answer(""),
                     watch_answer(event("MODIFIED", pod_version("13", true)))},
                    {pod_version("10", false)});
    REQUIRE(waiting.wait().has_value());
    CHECK(waiting.read_count == 1);
    CHECK(waiting.watched_from() == std::vector<std::string>{"10", "11", "11"});
}

TEST_CASE("A 410 Gone, an ERROR event or an event that cannot be read starts again from a fresh read", "[kube_watch]")
{
    const json::value gone{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                           {"reason", "Expired"}, {"code", 410}};
    Waiting waiting({{410, json::serialize(gone)}, watch_answer(event("ERROR", gone)), watch_answer("{\"type\":\n"),
                     watch_answer(event("MODIFIED", pod_version("14", true)))},
                    {pod_version("10", false), pod_version("11", false), pod_version("12", false),
                     pod_version("13", false)});
    REQUIRE(waiting.wait().has_value());
    CHECK(waiting.read_count == 4);
    CHECK(waiting.watched_from() == std::vector<std::string>{"10", "11", "12", "13"});
}

TEST_CASE("An apiserver that refuses the watch has the Pod read every interval until it ends", "[kube_watch]")
{
    Waiting waiting({{403, R"({"kind":"Status","code":403,"reason":"Forbidden"})"}},
                    {pod_version("10", false), pod_version("11", false), pod_version("12", true)});
    const auto begun = std::chrono::steady_clock::now();
    REQUIRE(waiting.wait().has_value());
    CHECK(std::chrono::steady_clock::now() - begun >= 2 * k_pod_poll_interval);
    CHECK(waiting.read_count == 3);
    CHECK(waiting.server.requests().size() == 1);
    CHECK(waiting.ended_pod == std::optional<json::value>(pod_version("12", true)));
}

TEST_CASE("A Pod deleted before its end, or another Pod of its name, is engine_no_such_object", "[kube_watch]")
{
    Waiting deleted({watch_answer(event("DELETED", pod_version("11", false)))}, {pod_version("10", false)});
    const auto gone = deleted.wait();
    REQUIRE_FALSE(gone.has_value());
    CHECK(gone.error().code == "engine_no_such_object");
    Waiting replaced({watch_answer(event("ADDED", pod_version("12", false, "0b9e6cbb-4d3c-4c58-9f0e-1a2b3c4d5e6f")))},
                     {pod_version("10", false)});
    const auto other = replaced.wait();
    REQUIRE_FALSE(other.has_value());
    CHECK(other.error().code == "engine_no_such_object");
    CHECK_FALSE(replaced.ended_pod.has_value());
}

TEST_CASE("A watch answered with another refusal ends the wait with the apiserver's error", "[kube_watch]")
{
    Waiting waiting({{500, R"({"kind":"Status","code":500,"message":"etcd is down"})"}}, {pod_version("10", false)});
    const auto failed = waiting.wait();
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == "engine_error");
    CHECK_THAT(failed.error().message, Catch::Contains("etcd is down"));
}
