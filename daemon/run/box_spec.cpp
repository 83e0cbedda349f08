#include "daemon/run/box_spec.hpp"

namespace pybox::daemon {

std::vector<std::string> box_environment()
{
    return {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp"};
}

std::vector<std::pair<std::string, std::string>> box_labels(const BoxIdentity& identity)
{
    return {{k_label_owner, identity.installation_id},
            {k_label_run, identity.run_id},
            {k_label_expires, std::to_string(identity.expires_at)},
            {k_label_user, std::to_string(identity.owner_uid)}};
}

engine::BoxSpec make_box_spec(const proto::BoxPolicy& policy, const std::string& image_id,
                              const std::vector<std::string>& command, const BoxIdentity& identity)
{
    engine::BoxSpec spec;
    spec.name = "pybox-" + identity.run_id;
    spec.image_id = image_id;
    spec.command = command;
    spec.environment = box_environment();
    spec.hostname = k_box_hostname;
    spec.policy = policy;
    spec.cgroup_parent = identity.cgroup_parent;
    spec.labels = box_labels(identity);
    return spec;
}

}  // namespace pybox::daemon
