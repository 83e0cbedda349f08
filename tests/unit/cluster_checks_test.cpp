#include "daemon/kube/cluster_checks.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace pybox::kube;
namespace json = boost::json;

TEST_CASE("/version's answer gives the Kubernetes version; 1.20 and later pass")
{
    auto version = parse_server_version(json::parse(
        R"({"major":"1","minor":"20","gitVersion":"v1.20.2","gitCommit":"x","platform":"linux/amd64"})"));
    REQUIRE(version.has_value());
    CHECK(version->major == 1);
    CHECK(version->minor == 20);
    CHECK(version->git_version == "v1.20.2");
    CHECK_FALSE(version_problem(*version).has_value());
    auto vendor = parse_server_version(json::parse(R"({"major":"1","minor":"29+","gitVersion":"v1.29.3-eks"})"));
    REQUIRE(vendor.has_value());
    CHECK(vendor->minor == 29);
    auto old = parse_server_version(json::parse(R"({"major":"1","minor":"19","gitVersion":"v1.19.0"})"));
    REQUIRE(old.has_value());
    CHECK(version_problem(*old) ==
          std::optional<ClusterProblem>({"apiserver", "The apiserver is Kubernetes v1.19.0; PyBox needs 1.20 or later."}));
}

TEST_CASE("A /version answer that is not a version is engine_protocol")
{
    for (const char* bad : {R"({})", R"({"major":1,"minor":"20","gitVersion":"v"})", R"({"major":"1","minor":"x","gitVersion":"v"})",
                            R"({"major":"1","minor":"","gitVersion":"v"})", R"([])"}) {
        INFO(bad);
        auto version = parse_server_version(json::parse(bad));
        REQUIRE_FALSE(version.has_value());
        CHECK(version.error().code == "engine_protocol");
    }
}

TEST_CASE("The namespace check passes for an Active namespace and names the problem otherwise")
{
    CHECK_FALSE(namespace_problem("pybox-test", 200, R"({"kind":"Namespace","metadata":{"name":"pybox-test"},"status":{"phase":"Active"}})"));
    CHECK(namespace_problem("gone", 404, R"({"kind":"Status","reason":"NotFound"})")->message ==
          "The namespace \"gone\" does not exist; create it, or name another in the engine entry.");
    CHECK_THAT(namespace_problem("ns", 403, "")->message, Catch::Contains("may not read the namespace \"ns\" (get namespaces)"));
    CHECK_THAT(namespace_problem("ns", 200, R"({"status":{"phase":"Terminating"}})")->message,
               Catch::Contains("is Terminating, not Active"));
    CHECK_THAT(namespace_problem("ns", 200, "[]")->message, Catch::Contains("not a namespace with a phase"));
    CHECK_THAT(namespace_problem("ns", 500, R"({"kind":"Status","message":"etcd down"})")->message,
               Catch::Contains("500 Internal Server Error: etcd down"));
    CHECK(namespace_problem("ns", 404, "")->check == "namespace");
}

TEST_CASE("The backend's permissions are the verbs and resources it uses, each once")
{
    std::set<std::string> names;
    for (const auto& need : backend_access_needs()) names.insert(describe_need(need));
    CHECK((names == std::set<std::string>{"create pods", "get pods", "list pods", "watch pods", "delete pods",
                                         "create pods/attach", "get pods/attach", "get namespaces", "get nodes/proxy",
                                         "get networkpolicies.networking.k8s.io", "list networkpolicies.networking.k8s.io",
                                         "create networkpolicies.networking.k8s.io"}));
    CHECK(names.size() == backend_access_needs().size());
}

TEST_CASE("An access review asks for the verb, group, resource and subresource, in the namespace when namespaced")
{
    const AccessNeed attach{"create", "", "pods", "attach", true};
    CHECK(json::serialize(access_review(attach, "pybox-test")) ==
          R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"create","group":"","resource":"pods","subresource":"attach","namespace":"pybox-test"}}})");
    const AccessNeed proxy{"get", "", "nodes", "proxy", false};
    CHECK(json::serialize(access_review(proxy, "pybox-test")) ==
          R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","group":"","resource":"nodes","subresource":"proxy"}}})");
    const AccessNeed ns{"get", "", "namespaces", "", true};
    CHECK(access_review(ns, "pybox-test").at("spec").at("resourceAttributes").at("name") == "pybox-test");
}

TEST_CASE("A denied permission is one problem naming the user, the verb, the resource and the scope")
{
    auto denied = parse_access_review(json::parse(R"({"kind":"SelfSubjectAccessReview","status":{"allowed":false}})"));
    REQUIRE(denied.has_value());
    CHECK_FALSE(denied->allowed);
    const AccessNeed attach{"get", "", "pods", "attach", true};
    CHECK(access_problem(attach, "pybox-test", "nobody", *denied) ==
          std::optional<ClusterProblem>({"access", "The kubeconfig's user \"nobody\" may not get pods/attach in the namespace "
                                                   "\"pybox-test\"; docs/kubernetes.md gives the Role PyBox needs."}));
    auto allowed = parse_access_review(
        json::parse(R"({"status":{"allowed":true,"reason":"RBAC: allowed by ClusterRoleBinding \"admin\""}})"));
    REQUIRE(allowed.has_value());
    CHECK_FALSE(access_problem(attach, "pybox-test", "admin", *allowed).has_value());
    const AccessNeed proxy{"get", "", "nodes", "proxy", false};
    auto reasoned = parse_access_review(json::parse(R"({"status":{"allowed":false,"reason":"no RBAC policy matched"}})"));
    REQUIRE(reasoned.has_value());
    CHECK(access_problem(proxy, "ns", "u", *reasoned)->message ==
          "The kubeconfig's user \"u\" may not get nodes/proxy (cluster-wide): no RBAC policy matched; docs/kubernetes.md gives "
          "the Role PyBox needs.");
}

TEST_CASE("An access review answer without status.allowed is engine_protocol")
{
    for (const char* bad : {R"({})", R"({"status":{}})", R"({"status":{"allowed":"yes"}})", R"({"status":{"allowed":false,"reason":7}})"}) {
        auto decision = parse_access_review(json::parse(bad));
        REQUIRE_FALSE(decision.has_value());
        CHECK(decision.error().code == "engine_protocol");
    }
}

TEST_CASE("configz's podPidsLimit is the node's pids limit; zero or negative is none")
{
    auto limited = parse_pod_pids_limit(R"({"kubeletconfig":{"enableServer":true,"podPidsLimit":64,"cgroupDriver":"cgroupfs"}})");
    REQUIRE(limited.has_value());
    CHECK(*limited == std::optional<std::int64_t>(64));
    auto unlimited = parse_pod_pids_limit(R"({"kubeletconfig":{"podPidsLimit":-1}})");
    REQUIRE(unlimited.has_value());
    CHECK_FALSE(unlimited->has_value());
    CHECK_FALSE(parse_pod_pids_limit(R"({"kubeletconfig":{"podPidsLimit":0}})")->has_value());
}

TEST_CASE("A configz answer that is not strictly a kubelet configuration with podPidsLimit is refused")
{
    for (const char* bad : {"", "{", "[]", R"({"kubeletconfig":{}})", R"({"kubeletconfig":{"podPidsLimit":"64"}})",
                            R"({"kubeletconfig":{"podPidsLimit":6.5}})", R"({"kubeletconfig":{"podPidsLimit":64},"extra":1})",
                            R"({"kubeletconfig":{"podPidsLimit":64,"podPidsLimit":1}})", R"({"kubeletconfig":{"podPidsLimit":64}} x)",
                            R"({"other":{}})"}) {
        INFO(bad);
        auto limit = parse_pod_pids_limit(bad);
        REQUIRE_FALSE(limit.has_value());
        CHECK(limit.error().code == "engine_protocol");
        CHECK_THAT(limit.error().message, Catch::StartsWith("The kubelet's configz "));
    }
}
