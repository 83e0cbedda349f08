// The NetworkPolicy that denies every connection to and from one owner's Pods (issue 30, "The
// Pod"): named pybox-deny-<owner>, selecting the Pods labelled pybox.owner=<owner>, for Ingress
// and Egress with no rule, so no traffic is allowed either way. It is made once (the first run
// that finds none) and read back before every run: a policy of that name that selects other Pods,
// allows any traffic or leaves a direction out is a mismatch and no program is delivered. Whether
// the cluster enforces it is up to its network plugin, which PyBox cannot observe (the receipt's
// `unknown`). Pure.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace pybox::kube {

// The label of the daemon's installation on its boxes (daemon/run/box_spec.hpp's k_label_owner).
inline constexpr std::string_view k_owner_label = "pybox.owner";

std::string deny_all_policy_name(std::string_view owner);
// The policy to POST to /apis/networking.k8s.io/v1/namespaces/NS/networkpolicies.
boost::json::object deny_all_policy(std::string_view owner);
// Why the policy the apiserver holds (a GET answer) is not the deny-all policy of `owner`, in a
// sentence; nullopt when it is.
std::optional<std::string> deny_all_problem(const boost::json::value& held, std::string_view owner);

}  // namespace pybox::kube
