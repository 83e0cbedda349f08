#include "daemon/run/box_spec.hpp"

#include "proto/seccomp_profile.hpp"

namespace pybox::daemon {

namespace json = boost::json;

std::vector<std::string> box_environment()
{
    return {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp"};
}

json::object box_labels(const BoxIdentity& identity)
{
    return {{k_label_owner, identity.installation_id},
            {k_label_run, identity.run_id},
            {k_label_expires, std::to_string(identity.expires_at)},
            {k_label_user, std::to_string(identity.owner_uid)}};
}

namespace {

json::array to_array(const std::vector<std::string>& strings)
{
    json::array array;
    for (const auto& s : strings) array.emplace_back(s);
    return array;
}

json::object soft_and_hard(std::string_view name, std::int64_t limit)
{
    return json::object{{"Name", name}, {"Soft", limit}, {"Hard", limit}};
}

}  // namespace

json::array box_security_options(const proto::BoxPolicy& policy)
{
    json::array options;
    if (policy.no_new_privileges) options.emplace_back("no-new-privileges");
    options.emplace_back("seccomp=" + std::string(proto::seccomp_profile_json()));
    return options;
}

json::array box_ulimits(const proto::BoxPolicy& policy)
{
    return json::array{soft_and_hard("nofile", policy.open_files), soft_and_hard("core", policy.core_dump_bytes)};
}

json::object make_box_spec(const proto::BoxPolicy& policy, const BoxRuntime& runtime, const std::string& image_id,
                           const std::vector<std::string>& command, const BoxIdentity& identity)
{
    json::object host_config{
        {"Memory", policy.memory_bytes},
        {"MemorySwap", policy.memory_bytes},
        {"PidsLimit", policy.pids},
        {"NanoCpus", policy.nano_cpus},
        {"CapDrop", json::array{policy.capabilities_dropped}},
        {"CapAdd", json::array{}},
        {"SecurityOpt", box_security_options(policy)},
        {"Privileged", false},
        {"ReadonlyRootfs", policy.readonly_root},
        {"Tmpfs", json::object{{policy.tmpfs_path, policy.tmpfs_mount_options()}}},
        {"ShmSize", policy.tmpfs_bytes},
        {"Runtime", runtime.name},
        {"NetworkMode", policy.network},
        {"Ulimits", box_ulimits(policy)},
        {"LogConfig", json::object{{"Type", policy.log_driver}, {"Config", json::object{}}}},
        {"AutoRemove", false},
        {"RestartPolicy", json::object{{"Name", "no"}}},
        {"Binds", json::array{}},
        {"Mounts", json::array{}},
        {"Devices", json::array{}},
        {"IpcMode", "private"},
        {"OomKillDisable", false},
        {"CgroupParent", identity.cgroup_parent},
    };
    return json::object{
        {"Image", image_id},
        {"Cmd", to_array(command)},
        {"Entrypoint", json::array{}},
        {"Env", to_array(box_environment())},
        {"User", policy.user},
        {"WorkingDir", policy.tmpfs_path},
        {"Hostname", k_box_hostname},
        {"NetworkDisabled", true},
        {"AttachStdin", true},
        {"AttachStdout", true},
        {"AttachStderr", true},
        {"OpenStdin", true},
        {"StdinOnce", true},
        {"Tty", false},
        // Whoever stops the box (the engine restarting, `docker stop`) kills it at once: a box has
        // nothing to shut down gracefully, and a warm box's waiting shell, PID 1 without a
        // handler, would ignore SIGTERM for the whole stop timeout.
        {"StopSignal", "SIGKILL"},
        {"Labels", box_labels(identity)},
        {"HostConfig", std::move(host_config)},
    };
}

}  // namespace pybox::daemon
