// The owner's deny-all NetworkPolicy (daemon/kube/network_policy.hpp): what is made, and every
// way a policy of that name can fail to be it.
#include "daemon/kube/network_policy.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace pybox::kube;
namespace json = boost::json;

namespace {

// The policy as an apiserver reads it back: PyBox's, with what the apiserver adds around it.
json::value held_policy(const std::string& spec)
{
    return json::parse(R"({"kind":"NetworkPolicy","metadata":{"name":"pybox-deny-abc","uid":"u","resourceVersion":"7"},"spec":)" +
                       spec + "}");
}

}  // namespace

TEST_CASE("The deny-all policy selects the owner's Pods for both directions with no rule", "[network_policy]")
{
    const auto policy = deny_all_policy("abc");
    CHECK(policy.at("metadata").at("name") == "pybox-deny-abc");
    CHECK(policy.at("spec") == json::parse(R"({"podSelector":{"matchLabels":{"pybox.owner":"abc"}},"policyTypes":["Ingress","Egress"]})"));
    CHECK_FALSE(deny_all_problem(json::value(policy), "abc").has_value());
}

TEST_CASE("A policy read back as PyBox made it is the deny-all policy, in either order of its types", "[network_policy]")
{
    CHECK_FALSE(deny_all_problem(held_policy(R"({"podSelector":{"matchLabels":{"pybox.owner":"abc"}},"policyTypes":["Egress","Ingress"]})"), "abc"));
    CHECK_FALSE(deny_all_problem(held_policy(R"({"podSelector":{"matchLabels":{"pybox.owner":"abc"}},"policyTypes":["Ingress","Egress"],"ingress":[],"egress":null})"), "abc"));
}

TEST_CASE("A policy of that name that is not the owner's deny-all policy is a problem", "[network_policy]")
{
    const auto problem = [](const std::string& spec) { return deny_all_problem(held_policy(spec), "abc"); };
    CHECK_THAT(*problem(R"({"podSelector":{},"policyTypes":["Ingress","Egress"]})"), Catch::Contains("does not select"));
    CHECK_THAT(*problem(R"({"podSelector":{"matchLabels":{"pybox.owner":"other"}},"policyTypes":["Ingress","Egress"]})"),
               Catch::Contains("does not select"));
    CHECK_THAT(*problem(R"({"podSelector":{"matchLabels":{"pybox.owner":"abc"}},"policyTypes":["Ingress"]})"),
               Catch::Contains("both Ingress and Egress"));
    CHECK_THAT(*problem(R"({"podSelector":{"matchLabels":{"pybox.owner":"abc"}},"policyTypes":["Ingress","Egress"],"egress":[{}]})"),
               Catch::Contains("allows some traffic"));
    CHECK_THAT(*problem(R"({"podSelector":{"matchLabels":{"pybox.owner":"abc"}},"policyTypes":["Ingress","Egress"],"future":1})"),
               Catch::Contains("future"));
    CHECK_THAT(*deny_all_problem(json::parse("[]"), "abc"), Catch::Contains("no spec"));
}
