#include "daemon/kube/pod_state.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

using namespace pybox;
namespace json = boost::json;

namespace {

constexpr const char* k_uid = "6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f";

// A Pod answer with the box container's status `container` (JSON text, or empty for none) and the
// Pod's `phase` and `reason`.
json::value pod(std::string_view container, std::string_view phase = "Running", std::string_view reason = "")
{
    json::object status{{"phase", phase}, {"qosClass", "Guaranteed"}};
    if (!reason.empty()) status["reason"] = reason;
    if (!container.empty()) status["containerStatuses"] = json::array{json::parse(container)};
    return json::object{{"metadata", json::object{{"name", "pybox-run"}, {"uid", k_uid}}},
                        {"spec", json::object{{"nodeName", "k8s-node"}}},
                        {"status", std::move(status)}};
}

constexpr const char* k_waiting =
    R"({"name":"box","state":{"waiting":{"reason":"ErrImagePull","message":"manifest unknown"}},"ready":false,
        "restartCount":0,"image":"127.0.0.1:5000/pybox/stdlib@sha256:aa","imageID":""})";
constexpr const char* k_running =
    R"({"name":"box","state":{"running":{"startedAt":"2026-12-04T10:00:01Z"}},"ready":true,"restartCount":0,
        "image":"sha256:bb","imageID":"docker-pullable://127.0.0.1:5000/pybox/stdlib@sha256:aa","containerID":"docker://cc"})";
constexpr const char* k_exit_3 =
    R"({"name":"box","state":{"terminated":{"exitCode":3,"reason":"Error","startedAt":"2026-12-04T10:00:01Z",
        "finishedAt":"2026-12-04T10:00:02Z","containerID":"docker://cc"}},"ready":false,"restartCount":0,
        "image":"sha256:bb","imageID":"docker-pullable://127.0.0.1:5000/pybox/stdlib@sha256:aa"})";
constexpr const char* k_oom =
    R"({"name":"box","state":{"terminated":{"exitCode":137,"reason":"OOMKilled","startedAt":"2026-12-04T10:00:01Z",
        "finishedAt":"2026-12-04T10:00:02Z"}},"ready":false,"restartCount":0,"image":"x","imageID":"y"})";

}  // namespace

TEST_CASE("A waiting box container is pending, and the Pod facts say why", "[pod_state]")
{
    const auto answer = pod(k_waiting, "Pending");
    const auto inspection = kube::inspect_pod(answer);
    const auto& state = inspection.state;
    CHECK(state.reported);
    CHECK(state.status == "pending");
    CHECK(!state.running);
    CHECK(!state.exit_code);
    CHECK(!state.started_at_ns);
    CHECK(state.raw == json::parse(k_waiting));
    CHECK(state.summary == json::parse(R"({"state":"waiting","exitCode":null,"reason":"ErrImagePull"})"));
    CHECK(inspection.raw == answer);
    const auto facts = kube::pod_facts(answer);
    CHECK(facts.phase == "Pending");
    CHECK(facts.waiting_reason == "ErrImagePull");
    CHECK(facts.waiting_message == "manifest unknown");
    CHECK(facts.node_name == "k8s-node");
    CHECK(facts.uid == k_uid);
}

TEST_CASE("A Pod without a container status yet is pending", "[pod_state]")
{
    const auto state = kube::box_container_state(pod("", "Pending"));
    CHECK(state.reported);
    CHECK(state.status == "pending");
    CHECK(state.raw.is_null());
    CHECK(state.exit_code_record == json::parse(R"({"exitCode":null})"));
}

TEST_CASE("A running box container is running since its start", "[pod_state]")
{
    const auto answer = pod(k_running);
    const auto state = kube::box_container_state(answer);
    CHECK(state.status == "running");
    CHECK(state.running);
    CHECK(!state.exit_code);
    CHECK(state.started_at_ns == std::int64_t{1796378401} * 1'000'000'000);
    CHECK(!state.first_pid);
    CHECK(kube::pod_facts(answer).image_id == "docker-pullable://127.0.0.1:5000/pybox/stdlib@sha256:aa");
}

TEST_CASE("A terminated box container reports its exit code and times", "[pod_state]")
{
    const auto state = kube::box_container_state(pod(k_exit_3, "Failed"));
    CHECK(state.status == "exited");
    CHECK(!state.running);
    CHECK(state.exit_code == 3);
    CHECK(!state.oom_killed);
    CHECK(state.started_at_ns == std::int64_t{1796378401} * 1'000'000'000);
    CHECK(state.finished_at_ns == std::int64_t{1796378402} * 1'000'000'000);
    CHECK(state.summary == json::parse(R"({"state":"terminated","exitCode":3,"reason":"Error"})"));
    CHECK(state.exit_code_record == json::parse(R"({"exitCode":3})"));
}

TEST_CASE("A box container terminated as OOMKilled is oom_killed", "[pod_state]")
{
    const auto state = kube::box_container_state(pod(k_oom, "Failed"));
    CHECK(state.exit_code == 137);
    CHECK(state.oom_killed);
}

namespace {

constexpr std::string_view k_nonce = "0123456789abcdef0123456789abcdef";

// A box container that ended with 137 and the termination message `message` (JSON, or empty for
// none).
json::value killed_pod(std::string_view message)
{
    auto terminated = json::parse(R"({"exitCode":137,"reason":"Error","startedAt":"2026-12-04T10:00:01Z",
                                      "finishedAt":"2026-12-04T10:00:02Z"})");
    if (!message.empty()) terminated.as_object()["message"] = json::parse(message);
    const json::value container{{"name", "box"}, {"state", {{"terminated", terminated}}}};
    return pod(json::serialize(container), "Failed");
}

}  // namespace

TEST_CASE("A box container whose termination message is the kill's record acknowledged the kill", "[pod_state]")
{
    const auto state = kube::box_container_state(killed_pod(R"("pybox-kill 0123456789abcdef0123456789abcdef\n")"), k_nonce);
    REQUIRE(state.reported);
    CHECK(state.kill_acknowledged == true);
    CHECK(state.kill_acknowledgement_record ==
          json::parse(R"({"terminationMessage":"pybox-kill 0123456789abcdef0123456789abcdef\n",
                          "kill_nonce":"0123456789abcdef0123456789abcdef"})"));
    CHECK(state.summary.size() == 3);
}

TEST_CASE("A termination message other than the kill's record, or none, acknowledged no kill", "[pod_state]")
{
    for (const char* message : {"", "null", R"("")", R"("pybox-kill 0123456789abcdef0123456789abcdee\n")",
                                R"("pybox-kill 0123456789abcdef0123456789abcdef")",
                                R"("pybox-kill 0123456789abcdef0123456789abcdef\nmore")",
                                R"("written by the program")"}) {
        INFO("message: " << message);
        const auto state = kube::box_container_state(killed_pod(message), k_nonce);
        REQUIRE(state.reported);
        CHECK(state.exit_code == 137);
        CHECK(state.kill_acknowledged == false);
        CHECK(state.kill_acknowledgement_record.at("kill_nonce") == json::value(k_nonce));
    }
}

TEST_CASE("Without a kill sent, even the record's form acknowledges nothing", "[pod_state]")
{
    const auto state = kube::box_container_state(killed_pod(R"("pybox-kill 0123456789abcdef0123456789abcdef\n")"));
    CHECK(state.kill_acknowledged == false);
    CHECK(state.kill_acknowledgement_record.at("kill_nonce").is_null());
}

TEST_CASE("A box container that has not ended says nothing of a kill's acknowledgement", "[pod_state]")
{
    for (const char* container : {k_waiting, k_running}) {
        const auto state = kube::box_container_state(pod(container), k_nonce);
        CHECK(state.reported);
        CHECK(!state.kill_acknowledged);
        CHECK(state.kill_acknowledgement_record.empty());
    }
}

TEST_CASE("A termination message that is not a string, or beyond the kubelet's bound, is not reported", "[pod_state]")
{
    for (const std::string& message : {std::string("3"), std::string("{}"),
                                      "\"" + std::string(kube::k_max_termination_message_bytes + 1, 'x') + "\""}) {
        const auto state = kube::box_container_state(killed_pod(message), k_nonce);
        CHECK(!state.reported);
        CHECK(!state.exit_code);
    }
    const auto longest = "\"" + std::string(kube::k_max_termination_message_bytes, 'x') + "\"";
    CHECK(kube::box_container_state(killed_pod(longest), k_nonce).kill_acknowledged == false);
}

TEST_CASE("A Pod past its activeDeadlineSeconds says DeadlineExceeded", "[pod_state]")
{
    const auto answer = pod(
        R"({"name":"box","state":{"terminated":{"exitCode":137,"reason":"Error","startedAt":"2026-12-04T10:00:01Z",
            "finishedAt":"2026-12-04T10:00:06Z"}}})",
        "Failed", "DeadlineExceeded");
    const auto facts = kube::pod_facts(answer);
    CHECK(facts.phase == "Failed");
    CHECK(facts.reason == "DeadlineExceeded");
    CHECK(kube::box_container_state(answer).exit_code == 137);
}

TEST_CASE("Only the box container's status is read", "[pod_state]")
{
    auto answer = pod(k_running);
    answer.at("status").at("containerStatuses").as_array().insert(
        answer.at("status").at("containerStatuses").as_array().begin(),
        json::parse(R"({"name":"other","state":{"terminated":{"exitCode":1}}})"));
    CHECK(kube::box_container_state(answer).status == "running");
}

TEST_CASE("A state of an unexpected type is not reported", "[pod_state]")
{
    for (const char* container : {R"({"name":"box","state":[]})",
                                  R"({"name":"box","state":{"terminated":{"exitCode":"3"}}})",
                                  R"({"name":"box","state":{"terminated":{"exitCode":4294967296}}})",
                                  R"({"name":"box","state":{"terminated":{}}})",
                                  R"({"name":"box","state":{"running":true}})"}) {
        const auto state = kube::box_container_state(pod(container));
        CHECK(!state.reported);
        CHECK(state.status.empty());
        CHECK(!state.exit_code);
    }
    CHECK(!kube::box_container_state(json::parse(R"({"status":{"containerStatuses":{}}})")).reported);
    CHECK(!kube::box_container_state(json::parse(R"({"status":[]})")).reported);
    CHECK(!kube::box_container_state(json::value(3)).reported);
    CHECK(kube::pod_facts(json::value(3)).phase.empty());
}

TEST_CASE("A PodList gives each Pod's box id and labels", "[pod_state]")
{
    const auto boxes = kube::listed_pods(json::parse(R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[
        {"metadata":{"name":"pybox-a","uid":"6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f","labels":{"pybox.run":"a"}}},
        {"metadata":{"name":"pybox-b","uid":"00000000-0000-0000-0000-000000000000"}}]})"));
    REQUIRE(boxes.has_value());
    REQUIRE(boxes->size() == 2);
    CHECK((*boxes)[0].id == "pybox-a/6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f");
    CHECK((*boxes)[0].label("pybox.run") == "a");
    CHECK((*boxes)[1].labels.empty());
    CHECK(kube::listed_pods(json::parse(R"({"kind":"PodList","items":null})"))->empty());
}

TEST_CASE("A malformed PodList is engine_protocol", "[pod_state]")
{
    for (const char* list : {R"([])", R"({"kind":"Pod","items":[]})", R"({"kind":"PodList"})",
                             R"({"kind":"PodList","items":[3]})",
                             R"({"kind":"PodList","items":[{"metadata":{"name":"a"}}]})",
                             R"({"kind":"PodList","items":[{"metadata":{"name":"A","uid":"6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f"}}]})",
                             R"({"kind":"PodList","items":[{"metadata":{"name":"a","uid":"6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f","labels":{"x":1}}}]})"}) {
        const auto boxes = kube::listed_pods(json::parse(list));
        REQUIRE(!boxes.has_value());
        CHECK(boxes.error().code == "engine_protocol");
    }
}

TEST_CASE("A box id splits into the Pod's name and UID, and back", "[pod_state]")
{
    const auto ref = kube::parse_pod_ref("pybox-fedcba98.x/6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f");
    REQUIRE(ref);
    CHECK(ref->name == "pybox-fedcba98.x");
    CHECK(ref->uid == "6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f");
    CHECK(kube::pod_ref_id(*ref) == "pybox-fedcba98.x/6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f");
    CHECK(kube::parse_pod_ref(std::string(253, 'a') + "/" + k_uid));
}

TEST_CASE("A box id that is not a Pod name and UID is refused", "[pod_state]")
{
    for (const std::string& id : {std::string(""), std::string("pybox"), std::string("/") + k_uid,
                                 std::string("Pybox/") + k_uid, std::string("-pybox/") + k_uid,
                                 std::string("pybox-/") + k_uid, std::string("py..box/") + k_uid,
                                 std::string("py_box/") + k_uid, std::string(254, 'a') + "/" + k_uid,
                                 std::string("pybox/6F1C0D2E-4A5B-4C3D-9E8F-0A1B2C3D4E5F"),
                                 std::string("pybox/6f1c0d2e4a5b4c3d9e8f0a1b2c3d4e5f"),
                                 std::string("pybox/") + k_uid + "/x", std::string("pybox/") + k_uid + "0"})
        CHECK(!kube::parse_pod_ref(id));
}
