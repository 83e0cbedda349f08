#include "daemon/engine/docker_settings.hpp"

#include "common/sha256.hpp"
#include "proto/seccomp_profile.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <string_view>

namespace pybox::engine {

namespace json = boost::json;

namespace {

// The HostConfig fields read back and compared; kept in one list so the receipt shows
// exactly what was checked.
constexpr std::string_view k_host_config_fields[] = {
    "Memory", "MemorySwap", "PidsLimit", "NanoCpus", "CapAdd", "CapDrop", "SecurityOpt",
    "Privileged", "ReadonlyRootfs", "Tmpfs", "NetworkMode", "Ulimits", "LogConfig", "AutoRemove",
    "Binds", "Mounts", "Devices", "DeviceRequests", "IpcMode", "PidMode", "UTSMode", "UsernsMode",
    "CgroupnsMode", "CgroupParent", "VolumesFrom", "Runtime", "ShmSize", "MaskedPaths", "ReadonlyPaths",
};

json::array to_array(const std::vector<std::string>& strings)
{
    json::array array;
    for (const auto& s : strings) array.emplace_back(s);
    return array;
}

json::object labels_object(const BoxSpec& spec)
{
    json::object labels;
    for (const auto& [key, value] : spec.labels) labels[key] = value;
    return labels;
}

json::object soft_and_hard(std::string_view name, std::int64_t limit)
{
    return json::object{{"Name", name}, {"Soft", limit}, {"Hard", limit}};
}

const json::value* find_path(const json::value& root, std::string_view first, std::string_view second)
{
    const auto* outer = root.if_object();
    if (outer == nullptr) return nullptr;
    const auto* middle = outer->if_contains(first);
    if (middle == nullptr || !middle->is_object()) return nullptr;
    return middle->as_object().if_contains(second);
}

bool is_empty_list(const json::value* value)
{
    return value == nullptr || value->is_null() || (value->is_array() && value->as_array().empty());
}

constexpr std::string_view k_seccomp_option = "seccomp=";

// SecurityOpt with each "seccomp=<profile text>" shown as "seccomp=sha256:<hex of the text>":
// how the check compares profiles and how the receipt names them, without the text itself.
json::value digest_security_options(const json::value& options)
{
    if (!options.is_array()) return options;
    json::array digested;
    for (const auto& item : options.as_array()) {
        const std::string_view text = item.is_string() ? std::string_view(item.as_string()) : std::string_view();
        if (text.starts_with(k_seccomp_option))
            digested.emplace_back(std::string(k_seccomp_option) + "sha256:" +
                                  sha256_hex(text.substr(k_seccomp_option.size())));
        else
            digested.push_back(item);
    }
    return digested;
}

class Checker {
public:
    explicit Checker(const json::value& inspected) : m_inspected(inspected) {}

    void equal(std::string_view section, std::string_view field, const json::value& expected)
    {
        const json::value* observed = find_path(m_inspected, section, field);
        if (observed == nullptr || *observed != expected)
            mismatch(section, field, json::serialize(expected), observed);
    }

    void empty(std::string_view section, std::string_view field)
    {
        const json::value* observed = find_path(m_inspected, section, field);
        if (!is_empty_list(observed)) mismatch(section, field, "[]", observed);
    }

    // Host namespaces and similar: only the engine's defaults ("" or the private value).
    void one_of(std::string_view section, std::string_view field, std::initializer_list<std::string_view> allowed)
    {
        const json::value* observed = find_path(m_inspected, section, field);
        const bool ok = observed == nullptr ||
                        (observed->is_string() &&
                         std::find(allowed.begin(), allowed.end(), std::string_view(observed->as_string())) !=
                             allowed.end());
        if (!ok) {
            std::string expected;
            for (auto value : allowed) expected += (expected.empty() ? "" : " or ") + json::serialize(json::value(value));
            mismatch(section, field, expected, observed);
        }
    }

    // Exactly the options make_box_spec sent, in order: no-new-privileges and PyBox's seccomp
    // profile, compared by the SHA-256 of the profile text the engine holds. Another profile,
    // `unconfined`, a missing profile or any added option is a mismatch.
    void security_options(const proto::BoxPolicy& policy)
    {
        const json::value* observed = find_path(m_inspected, "HostConfig", "SecurityOpt");
        const json::value expected = digest_security_options(docker_security_options(policy));
        if (observed == nullptr) {
            mismatch("HostConfig", "SecurityOpt", json::serialize(expected), nullptr);
            return;
        }
        const json::value digested = digest_security_options(*observed);
        if (digested != expected) mismatch("HostConfig", "SecurityOpt", json::serialize(expected), &digested);
    }

    std::vector<SettingMismatch> take() { return std::move(m_mismatches); }

private:
    void mismatch(std::string_view section, std::string_view field, std::string expected, const json::value* observed)
    {
        m_mismatches.push_back({std::string(section) + "." + std::string(field), std::move(expected),
                                observed == nullptr ? "missing" : json::serialize(*observed)});
    }

    const json::value& m_inspected;
    std::vector<SettingMismatch> m_mismatches;
};

std::vector<SettingMismatch> mismatches_of(const BoxSpec& spec, std::string_view runtime, const json::value& inspected)
{
    const proto::BoxPolicy& policy = spec.policy;
    Checker check(inspected);
    check.equal("HostConfig", "Memory", policy.memory_bytes);
    check.equal("HostConfig", "MemorySwap", policy.memory_bytes);
    check.equal("HostConfig", "PidsLimit", policy.pids);
    check.equal("HostConfig", "NanoCpus", docker_nano_cpus(policy));
    check.equal("HostConfig", "CapDrop", json::array{json::value(policy.capabilities_dropped)});
    check.empty("HostConfig", "CapAdd");
    check.security_options(policy);
    check.equal("HostConfig", "Privileged", false);
    check.equal("HostConfig", "ReadonlyRootfs", policy.readonly_root);
    check.equal("HostConfig", "Tmpfs", json::object{{policy.tmpfs_path, docker_tmpfs_options(policy)}});
    check.equal("HostConfig", "ShmSize", policy.tmpfs_bytes);
    check.equal("HostConfig", "MaskedPaths", to_array(policy.masked_paths));
    check.equal("HostConfig", "ReadonlyPaths", to_array(policy.readonly_paths));
    check.equal("HostConfig", "Runtime", json::value(runtime));
    check.equal("HostConfig", "NetworkMode", json::value(policy.network));
    check.equal("HostConfig", "Ulimits", docker_ulimits(policy));
    check.equal("HostConfig", "AutoRemove", false);
    check.empty("HostConfig", "Binds");
    check.empty("HostConfig", "Mounts");
    check.empty("HostConfig", "Devices");
    check.empty("HostConfig", "DeviceRequests");
    check.empty("HostConfig", "VolumesFrom");
    check.one_of("HostConfig", "IpcMode", {"private"});
    check.one_of("HostConfig", "PidMode", {""});
    check.one_of("HostConfig", "UTSMode", {""});
    check.one_of("HostConfig", "UsernsMode", {""});
    check.one_of("HostConfig", "CgroupnsMode", {"", "private", "host"});
    check.equal("HostConfig", "CgroupParent", json::value(spec.cgroup_parent));

    const json::value* log_type = nullptr;
    if (const auto* log_config = find_path(inspected, "HostConfig", "LogConfig"); log_config && log_config->is_object())
        log_type = log_config->as_object().if_contains("Type");
    if (log_type == nullptr || *log_type != json::value(k_no_log_driver))
        check.equal("HostConfig", "LogConfig", json::object{{"Type", k_no_log_driver}, {"Config", json::object{}}});

    check.equal("Config", "User", json::value(policy.user));
    check.equal("Config", "Tty", false);
    check.equal("Config", "Labels", labels_object(spec));
    return check.take();
}

json::object settings_record(const json::value& inspected, const std::vector<SettingMismatch>& mismatches)
{
    json::object host_config;
    for (auto field : k_host_config_fields) {
        const json::value* value = find_path(inspected, "HostConfig", field);
        host_config[field] = value ? *value : json::value(nullptr);
    }
    host_config["SecurityOpt"] = digest_security_options(host_config["SecurityOpt"]);
    json::object config;
    for (std::string_view field : {"User", "Tty", "Labels", "Image"}) {
        const json::value* value = find_path(inspected, "Config", field);
        config[field] = value ? *value : json::value(nullptr);
    }
    json::array mismatch_list;
    for (const auto& m : mismatches)
        mismatch_list.push_back(json::object{{"field", m.field}, {"expected", m.expected}, {"observed", m.observed}});
    return json::object{{"source", "GET /containers/{id}/json before start"},
                        {"HostConfig", std::move(host_config)},
                        {"Config", std::move(config)},
                        {"mismatches", std::move(mismatch_list)}};
}

}  // namespace

json::array docker_security_options(const proto::BoxPolicy& policy)
{
    json::array options;
    if (policy.no_new_privileges) options.emplace_back("no-new-privileges");
    options.emplace_back("seccomp=" + std::string(proto::seccomp_profile_json()));
    return options;
}

std::int64_t docker_nano_cpus(const proto::BoxPolicy& policy)
{
    return policy.cpu_millis * 1'000'000;
}

std::string docker_tmpfs_options(const proto::BoxPolicy& policy)
{
    const std::string flags = proto::tmpfs_flags(policy);
    return "size=" + std::to_string(policy.tmpfs_bytes) + (flags.empty() ? "" : "," + flags);
}

json::array docker_ulimits(const proto::BoxPolicy& policy)
{
    return json::array{soft_and_hard("nofile", policy.open_files), soft_and_hard("core", policy.core_dump_bytes)};
}

json::object docker_create_body(const BoxSpec& spec, std::string_view runtime)
{
    const proto::BoxPolicy& policy = spec.policy;
    json::object host_config{
        {"Memory", policy.memory_bytes},
        {"MemorySwap", policy.memory_bytes},
        {"PidsLimit", policy.pids},
        {"NanoCpus", docker_nano_cpus(policy)},
        {"CapDrop", json::array{policy.capabilities_dropped}},
        {"CapAdd", json::array{}},
        {"SecurityOpt", docker_security_options(policy)},
        {"Privileged", false},
        {"ReadonlyRootfs", policy.readonly_root},
        {"Tmpfs", json::object{{policy.tmpfs_path, docker_tmpfs_options(policy)}}},
        {"ShmSize", policy.tmpfs_bytes},
        {"MaskedPaths", to_array(policy.masked_paths)},
        {"ReadonlyPaths", to_array(policy.readonly_paths)},
        {"Runtime", runtime},
        {"NetworkMode", policy.network},
        {"Ulimits", docker_ulimits(policy)},
        {"LogConfig", json::object{{"Type", k_no_log_driver}, {"Config", json::object{}}}},
        {"AutoRemove", false},
        {"RestartPolicy", json::object{{"Name", "no"}}},
        {"Binds", json::array{}},
        {"Mounts", json::array{}},
        {"Devices", json::array{}},
        {"IpcMode", "private"},
        {"OomKillDisable", false},
        {"CgroupParent", spec.cgroup_parent},
    };
    return json::object{
        {"Image", spec.image_id},
        {"Cmd", to_array(spec.command)},
        {"Entrypoint", json::array{}},
        {"Env", to_array(spec.environment)},
        {"User", policy.user},
        {"WorkingDir", policy.tmpfs_path},
        {"Hostname", spec.hostname},
        {"NetworkDisabled", true},
        {"AttachStdin", true},
        {"AttachStdout", true},
        {"AttachStderr", true},
        {"OpenStdin", true},
        {"StdinOnce", true},
        {"Tty", false},
        // Whoever stops the box (the engine restarting, `docker stop`) kills it at once: a box has
        // nothing to shut down gracefully, and a warm box's waiting first process, PID 1 without a
        // handler, would ignore SIGTERM for the whole stop timeout.
        {"StopSignal", "SIGKILL"},
        {"Labels", labels_object(spec)},
        {"HostConfig", std::move(host_config)},
    };
}

SettingsCheck check_docker_settings(const BoxSpec& spec, std::string_view runtime, const json::value& inspected)
{
    SettingsCheck check;
    check.mismatches = mismatches_of(spec, runtime, inspected);
    check.record = settings_record(inspected, check.mismatches);
    return check;
}

}  // namespace pybox::engine
