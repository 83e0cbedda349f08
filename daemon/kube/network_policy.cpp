#include "daemon/kube/network_policy.hpp"

#include <boost/json/array.hpp>

namespace pybox::kube {

namespace json = boost::json;

namespace {

// Whether `value` is absent or an empty array: no rule.
bool no_rules(const json::object& spec, std::string_view key)
{
    const auto* rules = spec.if_contains(key);
    return rules == nullptr || rules->is_null() || (rules->is_array() && rules->as_array().empty());
}

}  // namespace

std::string deny_all_policy_name(std::string_view owner)
{
    return "pybox-deny-" + std::string(owner);
}

json::object deny_all_policy(std::string_view owner)
{
    return json::object{
        {"apiVersion", "networking.k8s.io/v1"},
        {"kind", "NetworkPolicy"},
        {"metadata", {{"name", deny_all_policy_name(owner)}, {"labels", {{k_owner_label, owner}}}}},
        {"spec",
         {{"podSelector", {{"matchLabels", {{k_owner_label, owner}}}}}, {"policyTypes", json::array{"Ingress", "Egress"}}}}};
}

std::optional<std::string> deny_all_problem(const json::value& held, std::string_view owner)
{
    const auto* object = held.if_object();
    const auto* spec_value = object ? object->if_contains("spec") : nullptr;
    const auto* spec = spec_value ? spec_value->if_object() : nullptr;
    if (spec == nullptr) return "the NetworkPolicy " + deny_all_policy_name(owner) + " has no spec";
    const json::value expected_selector = json::object{{"matchLabels", {{k_owner_label, owner}}}};
    const auto* selector = spec->if_contains("podSelector");
    if (selector == nullptr || *selector != expected_selector)
        return "the NetworkPolicy " + deny_all_policy_name(owner) + " does not select exactly the Pods labelled " +
               std::string(k_owner_label) + "=" + std::string(owner);
    const json::value both = json::array{"Ingress", "Egress"};
    const json::value reversed = json::array{"Egress", "Ingress"};
    const auto* types = spec->if_contains("policyTypes");
    if (types == nullptr || (*types != both && *types != reversed))
        return "the NetworkPolicy " + deny_all_policy_name(owner) + " does not cover both Ingress and Egress";
    if (!no_rules(*spec, "ingress") || !no_rules(*spec, "egress"))
        return "the NetworkPolicy " + deny_all_policy_name(owner) + " allows some traffic (it has ingress or egress rules)";
    for (const auto& [key, value] : *spec)
        if (key != "podSelector" && key != "policyTypes" && key != "ingress" && key != "egress")
            return "the NetworkPolicy " + deny_all_policy_name(owner) + " has a spec field PyBox does not set: " +
                   std::string(key);
    return std::nullopt;
}

}  // namespace pybox::kube
