#include "daemon/kube/node_seccomp.hpp"

#include <catch2/catch.hpp>

using namespace pybox;
using namespace std::chrono_literals;

namespace {

constexpr const char* k_profile = "pybox-seccomp-v2.json";

kube::MissingProfile seen(std::string node, MonoClock::time_point at)
{
    return {std::move(node), at, WallClock::now(), "CreateContainerError: ..."};
}

// The box container's status as Kubernetes 1.20 reported it on the test cluster with the profile
// file moved away (docs/kubernetes.md, "Seccomp").
kube::PodFacts without_profile(std::string root = "/var/lib/kubelet/seccomp", std::string profile = k_profile)
{
    kube::PodFacts facts;
    facts.phase = "Pending";
    facts.node_name = "node-a";
    facts.waiting_reason = "CreateContainerError";
    const std::string path = root + "/" + profile;
    facts.waiting_message = "failed to generate security options for container \"box\": failed to generate seccomp "
                            "security options for container: cannot load seccomp profile \"" +
                            path + "\": open " + path + ": no such file or directory";
    return facts;
}

}  // namespace

TEST_CASE("The kubelet's report of a missing profile file is recognised", "[node_seccomp]")
{
    CHECK(kube::lacks_localhost_profile(without_profile(), k_profile));
    CHECK(kube::lacks_localhost_profile(without_profile("/tmp/pybox-k8s/run/kubelet/seccomp"), k_profile));
}

TEST_CASE("A Pod that asked for the runtime's default, or for another profile, lacks no profile of PyBox's",
          "[node_seccomp]")
{
    CHECK_FALSE(kube::lacks_localhost_profile(without_profile(), ""));
    CHECK_FALSE(kube::lacks_localhost_profile(without_profile(), "pybox-seccomp-v1.json"));
    CHECK_FALSE(kube::lacks_localhost_profile(without_profile("/r", "x" + std::string(k_profile)), k_profile));
}

TEST_CASE("Any other reason or message is not taken for a missing profile file", "[node_seccomp]")
{
    auto other_reason = without_profile();
    other_reason.waiting_reason = "CreateContainerConfigError";
    CHECK_FALSE(kube::lacks_localhost_profile(other_reason, k_profile));

    auto unreadable = without_profile();
    unreadable.waiting_message.replace(unreadable.waiting_message.find("no such file"), std::string::npos,
                                       "permission denied");
    CHECK_FALSE(kube::lacks_localhost_profile(unreadable, k_profile));

    auto other_container = without_profile();
    other_container.waiting_message.replace(other_container.waiting_message.find("\"box\""), 5, "\"sidecar\"");
    CHECK_FALSE(kube::lacks_localhost_profile(other_container, k_profile));

    // The path it could not open is not the one it named, or is relative.
    auto two_paths = without_profile();
    two_paths.waiting_message.replace(two_paths.waiting_message.find("open /var"), 9, "open /etc");
    CHECK_FALSE(kube::lacks_localhost_profile(two_paths, k_profile));
    CHECK_FALSE(kube::lacks_localhost_profile(without_profile("var/lib/kubelet/seccomp"), k_profile));

    auto more = without_profile();
    more.waiting_message += " (and more)";
    CHECK_FALSE(kube::lacks_localhost_profile(more, k_profile));

    auto waiting = without_profile();
    waiting.waiting_reason = "ContainerCreating";
    waiting.waiting_message.clear();
    CHECK_FALSE(kube::lacks_localhost_profile(waiting, k_profile));
}

TEST_CASE("A node seen without the profile is remembered, and no other", "[node_seccomp]")
{
    const auto now = MonoClock::now();
    kube::MissingProfileNodes nodes;
    nodes.note(seen("node-a", now));
    const auto* missing = nodes.lacking("node-a", now + 1s);
    REQUIRE(missing != nullptr);
    CHECK(missing->node == "node-a");
    CHECK(nodes.lacking("node-b", now) == nullptr);
    CHECK(nodes.lacking("", now) == nullptr);
}

TEST_CASE("A node seen without the profile is looked at again once its memory has passed", "[node_seccomp]")
{
    const auto now = MonoClock::now();
    kube::MissingProfileNodes nodes;
    nodes.note(seen("node-a", now));
    CHECK(nodes.lacking("node-a", now + kube::k_missing_profile_memory - 1s) != nullptr);
    CHECK(nodes.lacking("node-a", now + kube::k_missing_profile_memory) == nullptr);
}

TEST_CASE("A node seen again without the profile is remembered from then", "[node_seccomp]")
{
    const auto now = MonoClock::now();
    kube::MissingProfileNodes nodes;
    nodes.note(seen("node-a", now));
    nodes.note(seen("node-a", now + 5min));
    CHECK(nodes.lacking("node-a", now + kube::k_missing_profile_memory + 1min) != nullptr);
}

TEST_CASE("Forgetting the nodes makes each be looked at again", "[node_seccomp]")
{
    const auto now = MonoClock::now();
    kube::MissingProfileNodes nodes;
    nodes.note(seen("node-a", now));
    nodes.forget_all();
    CHECK(nodes.lacking("node-a", now) == nullptr);
}

TEST_CASE("The record of a node seen without the profile names it, when and the kubelet's words", "[node_seccomp]")
{
    const auto missing = seen("node-a", MonoClock::now());
    const auto record = kube::missing_profile_record(missing);
    CHECK(record.at("node") == "node-a");
    CHECK(record.at("kubelet") == "CreateContainerError: ...");
    CHECK(record.at("seen_at").as_string() == rfc3339_utc(missing.seen_wall));
}
