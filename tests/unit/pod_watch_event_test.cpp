// The reader of one line of the apiserver's watch of a Pod (daemon/kube/pod_watch_event.hpp). The
// Pod lines are real: the test cluster's watch of one run's Pod, from its admission to its
// deletion (the fuzz target's seeds, tests/fuzz/corpus/pod_watch_event_fuzz/).
#include "daemon/kube/pod_state.hpp"
#include "daemon/kube/pod_watch_event.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox;
using namespace pybox::kube;

namespace {

std::string watched_line(const std::string& name)
{
    return test::read_text(test::source_dir() / "tests/fuzz/corpus/pod_watch_event_fuzz" / (name + ".json"));
}

}  // namespace

TEST_CASE("A watch line of a Pod gives its type, version and the Pod as a GET gives it", "[kube_watch]")
{
    const auto added = parse_pod_watch_event(watched_line("added_none"));
    REQUIRE(added.has_value());
    CHECK(added->type == WatchEventType::added);
    CHECK(added->resource_version == "809");
    CHECK(pod_facts(added->pod).uid == "2193b2bb-47ae-4752-a486-28449dffc095");
    CHECK(box_container_state(added->pod).status == "pending");
    CHECK_FALSE(shows_end(added->pod));

    const auto running = parse_pod_watch_event(watched_line("modified_running"));
    REQUIRE(running.has_value());
    CHECK(running->type == WatchEventType::modified);
    CHECK(box_container_state(running->pod).running);
    CHECK_FALSE(shows_end(running->pod));
}

TEST_CASE("The first version whose box container terminated shows the end, with the kill's record", "[kube_watch]")
{
    const auto ended = parse_pod_watch_event(watched_line("modified_terminated"));
    REQUIRE(ended.has_value());
    CHECK(ended->type == WatchEventType::modified);
    CHECK(ended->resource_version == "822");
    CHECK(shows_end(ended->pod));
    const auto state = box_container_state(ended->pod, "a95bc5f3e5511329a492e9f15df3aed8");
    CHECK(state.exit_code == 137);
    CHECK(state.kill_acknowledged == true);

    const auto deleted = parse_pod_watch_event(watched_line("deleted_terminated"));
    REQUIRE(deleted.has_value());
    CHECK(deleted->type == WatchEventType::deleted);
    CHECK(deleted->resource_version == "824");
}

TEST_CASE("An ERROR event carries the apiserver's Status, 410 Gone among them", "[kube_watch]")
{
    const auto gone = parse_pod_watch_event(watched_line("error_gone"));
    REQUIRE(gone.has_value());
    CHECK(gone->type == WatchEventType::error);
    REQUIRE(gone->status.has_value());
    CHECK(gone->status->reason == "Expired");
    CHECK(gone->status->code == 410);
    const auto other = parse_pod_watch_event(R"({"type":"ERROR","object":{"kind":"Status","code":500,"message":"x"}})");
    REQUIRE(other.has_value());
    REQUIRE(other->status.has_value());
    CHECK(other->status->code == 500);
}

TEST_CASE("A BOOKMARK gives only a version", "[kube_watch]")
{
    const auto bookmark = parse_pod_watch_event(watched_line("bookmark"));
    REQUIRE(bookmark.has_value());
    CHECK(bookmark->type == WatchEventType::bookmark);
    CHECK(bookmark->resource_version == "12746");
}

TEST_CASE("A watch line that is not exactly an event of a Pod is engine_protocol", "[kube_watch]")
{
    const std::string pod = R"({"kind":"Pod","metadata":{"name":"p","uid":"u","resourceVersion":"1"}})";
    for (const std::string& line : {
             std::string("not json"),
             std::string(R"({"type":"ADDED"})"),
             R"({"type":"ADDED","object":)" + pod + R"(,"extra":1})",
             R"({"type":"ADDED","type":"ADDED","object":)" + pod + "}",
             R"({"type":"CHANGED","object":)" + pod + "}",
             std::string(R"({"type":"ADDED","object":[]})"),
             std::string(R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","uid":"u"}}})"),
             std::string(R"({"type":"ADDED","object":{"kind":"Service","metadata":{"name":"p","uid":"u","resourceVersion":"1"}}})"),
             std::string(R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"resourceVersion":"1"}}})"),
             std::string(R"({"type":"ERROR","object":{"kind":"Pod"}})"),
             R"({"type":"ADDED","object":)" + pod + "} trailing",
         }) {
        INFO(line);
        const auto event = parse_pod_watch_event(line);
        REQUIRE_FALSE(event.has_value());
        CHECK(event.error().code == "engine_protocol");
    }
    CHECK(parse_pod_watch_event(R"({"type":"ADDED","object":)" + pod + "}").has_value());
}
