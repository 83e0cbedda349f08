#include "daemon/kube/cluster_checks.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/kube/kube_status.hpp"
#include "util/json_reader.hpp"
#include "util/strict_json.hpp"

#include <array>
#include <charconv>

namespace pybox::kube {

namespace {

namespace json = boost::json;

// configz's answer is a flat configuration a few levels deep; a Namespace object (with its
// managedFields) somewhat deeper.
constexpr std::size_t k_configz_depth = 16;
constexpr std::size_t k_namespace_depth = 64;

std::optional<unsigned> version_part(std::string_view text, bool plus_allowed)
{
    if (plus_allowed && !text.empty() && text.back() == '+') text.remove_suffix(1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

constexpr std::array<AccessNeed, 12> k_backend_access_needs{{
    {"create", "", "pods", "", true},
    {"get", "", "pods", "", true},
    {"list", "", "pods", "", true},
    {"watch", "", "pods", "", true},
    {"delete", "", "pods", "", true},
    {"create", "", "pods", "attach", true},
    {"get", "", "pods", "attach", true},
    {"get", "", "namespaces", "", true},
    {"get", "", "nodes", "proxy", false},
    {"get", "networking.k8s.io", "networkpolicies", "", true},
    {"list", "networking.k8s.io", "networkpolicies", "", true},
    {"create", "networking.k8s.io", "networkpolicies", "", true},
}};

}  // namespace

Expected<ServerVersion> parse_server_version(const json::value& answer)
{
    std::string error;
    util::ObjectReader reader(answer, "version", error, util::ReadMode::tolerant);
    const auto major = reader.string("major");
    const auto minor = reader.string("minor");
    ServerVersion version;
    version.git_version = reader.string("gitVersion");
    const auto major_number = version_part(major, false);
    const auto minor_number = version_part(minor, true);
    if (!error.empty() || !major_number || !minor_number)
        return make_error(api_error::k_engine_protocol,
                          "GET /version: the apiserver's answer is not a version" + (error.empty() ? "" : ": " + error) + ".");
    version.major = *major_number;
    version.minor = *minor_number;
    return version;
}

std::optional<ClusterProblem> version_problem(const ServerVersion& version)
{
    if (version.major > 1 || (version.major == 1 && version.minor >= k_oldest_minor_version)) return std::nullopt;
    return ClusterProblem{"apiserver", "The apiserver is Kubernetes " + version.git_version + "; PyBox needs 1." +
                                           std::to_string(k_oldest_minor_version) + " or later."};
}

std::optional<ClusterProblem> namespace_problem(std::string_view namespace_name, unsigned status, std::string_view body)
{
    const std::string name = "\"" + std::string(namespace_name) + "\"";
    if (status == 404) return ClusterProblem{"namespace", "The namespace " + name + " does not exist; create it, or name another in the engine entry."};
    if (status == 403)
        return ClusterProblem{"namespace", "The kubeconfig's user may not read the namespace " + name +
                                               " (get namespaces), so whether it exists cannot be checked."};
    if (status / 100 != 2) return ClusterProblem{"namespace", status_error("GET /api/v1/namespaces/" + std::string(namespace_name), status, body).message};
    const auto parsed = util::parse_json_strictly(body, k_namespace_depth);
    std::string error;
    std::string phase;
    if (parsed.ok() && parsed.value.is_object()) {
        util::ObjectReader reader(parsed.value, "namespace", error, util::ReadMode::tolerant);
        phase = reader.object("status").string("phase");
    }
    if (!parsed.ok() || !parsed.value.is_object() || !error.empty())
        return ClusterProblem{"namespace", "GET /api/v1/namespaces/" + std::string(namespace_name) +
                                               ": the apiserver's answer is not a namespace with a phase."};
    if (phase != "Active")
        return ClusterProblem{"namespace", "The namespace " + name + " is " + phase + ", not Active; no Pod can be made in it."};
    return std::nullopt;
}

std::span<const AccessNeed> backend_access_needs() { return k_backend_access_needs; }

std::string describe_need(const AccessNeed& need)
{
    std::string resource(need.resource);
    if (!need.group.empty()) resource += "." + std::string(need.group);
    if (!need.subresource.empty()) resource += "/" + std::string(need.subresource);
    return std::string(need.verb) + " " + resource;
}

json::value access_review(const AccessNeed& need, std::string_view namespace_name)
{
    json::object attributes{{"verb", need.verb}, {"group", need.group}, {"resource", need.resource}};
    if (!need.subresource.empty()) attributes["subresource"] = need.subresource;
    if (need.namespaced) attributes["namespace"] = namespace_name;
    // The namespace check reads the namespace by its name.
    if (need.resource == "namespaces") attributes["name"] = namespace_name;
    return json::object{{"apiVersion", "authorization.k8s.io/v1"},
                        {"kind", "SelfSubjectAccessReview"},
                        {"spec", json::object{{"resourceAttributes", std::move(attributes)}}}};
}

Expected<AccessDecision> parse_access_review(const json::value& answer)
{
    std::string error;
    util::ObjectReader reader(answer, "review", error, util::ReadMode::tolerant);
    auto status = reader.object("status");
    AccessDecision decision;
    decision.allowed = status.boolean("allowed");
    if (const auto* reason = status.if_present("reason"); reason != nullptr && !reason->is_null()) {
        if (reason->is_string())
            decision.reason = std::string(reason->get_string());
        else
            status.fail("reason", "must be a string");
    }
    if (!error.empty())
        return make_error(api_error::k_engine_protocol, "The apiserver's answer to an access review is not one: " + error + ".");
    return decision;
}

std::optional<ClusterProblem> access_problem(const AccessNeed& need, std::string_view namespace_name,
                                             std::string_view user, const AccessDecision& decision)
{
    if (decision.allowed) return std::nullopt;
    const std::string scope = need.namespaced ? " in the namespace \"" + std::string(namespace_name) + "\"" : " (cluster-wide)";
    return ClusterProblem{"access", "The kubeconfig's user \"" + std::string(user) + "\" may not " + describe_need(need) +
                                        scope + (decision.reason.empty() ? "" : ": " + decision.reason) +
                                        "; docs/kubernetes.md gives the Role PyBox needs."};
}

Expected<std::optional<std::int64_t>> parse_pod_pids_limit(std::string_view body)
{
    const auto refuse = [](const std::string& problem) {
        return make_error(api_error::k_engine_protocol, "The kubelet's configz " + problem + ".");
    };
    const auto parsed = util::parse_json_strictly(body, k_configz_depth);
    if (!parsed.ok()) return refuse(parsed.refusal());
    if (!parsed.value.is_object()) return refuse("is not a JSON object");
    std::string error;
    util::ObjectReader top(parsed.value, "configz", error, util::ReadMode::strict);
    auto config = top.object("kubeletconfig");
    const auto limit = config.int64("podPidsLimit");
    top.finish();
    if (!error.empty()) return refuse("is not a kubelet configuration with podPidsLimit: " + error);
    if (limit <= 0) return std::optional<std::int64_t>();
    return std::optional<std::int64_t>(limit);
}

}  // namespace pybox::kube
