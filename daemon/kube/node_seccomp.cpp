#include "daemon/kube/node_seccomp.hpp"

#include "daemon/kube/pod_spec.hpp"

namespace pybox::kube {

bool lacks_localhost_profile(const PodFacts& facts, std::string_view profile)
{
    // Kubernetes 1.20's dockershim, measured on the test cluster with the profile file moved away:
    //   failed to generate security options for container "box": failed to generate seccomp
    //   security options for container: cannot load seccomp profile "PATH": open PATH: no such
    //   file or directory
    // where PATH is the kubelet's seccomp root, "/" and the profile.
    if (profile.empty() || facts.waiting_reason != "CreateContainerError") return false;
    const std::string prefix = "failed to generate security options for container \"" + std::string(k_box_container) +
                               "\": failed to generate seccomp security options for container: cannot load seccomp "
                               "profile \"";
    constexpr std::string_view k_suffix = ": no such file or directory";
    std::string_view message = facts.waiting_message;
    if (!message.starts_with(prefix) || !message.ends_with(k_suffix)) return false;
    message.remove_prefix(prefix.size());
    message.remove_suffix(k_suffix.size());
    const auto quote = message.find('"');
    if (quote == std::string_view::npos) return false;
    const std::string_view path = message.substr(0, quote);
    return path.starts_with("/") && path.ends_with("/" + std::string(profile)) &&
           message.substr(quote) == "\": open " + std::string(path);
}

boost::json::object missing_profile_record(const MissingProfile& missing)
{
    return {{"node", missing.node}, {"seen_at", rfc3339_utc(missing.seen_wall)}, {"kubelet", missing.kubelet_said}};
}

void MissingProfileNodes::note(MissingProfile missing)
{
    auto node = missing.node;
    m_nodes.insert_or_assign(std::move(node), std::move(missing));
}

const MissingProfile* MissingProfileNodes::lacking(std::string_view node, MonoClock::time_point now) const
{
    if (node.empty()) return nullptr;  // no node named: none is known to lack the profile
    const auto found = m_nodes.find(node);
    if (found == m_nodes.end() || now - found->second.seen >= k_missing_profile_memory) return nullptr;
    return &found->second;
}

}  // namespace pybox::kube
