#include "proto/box_policy.hpp"

#include "common/limits.hpp"
#include "proto/seccomp_profile.hpp"
#include "proto/text.hpp"

namespace pybox::proto {

namespace {

constexpr std::int64_t k_mib = 1024 * 1024;

}  // namespace

std::string BoxPolicy::tmpfs_mount_options() const
{
    return "size=" + std::to_string(tmpfs_bytes) + "," + tmpfs_options;
}

std::optional<BoxPolicy> policy_for_image(const std::string& image)
{
    BoxPolicy policy;
    policy.seccomp = k_seccomp_profile_name;
    policy.seccomp_sha256 = seccomp_profile_sha256();
    if (image == "stdlib") {
        policy.memory_bytes = 128 * k_mib;
        policy.pids = 32;
        policy.nano_cpus = 500'000'000;
        return policy;
    }
    if (image == "data") {
        policy.memory_bytes = 512 * k_mib;
        policy.pids = 64;
        policy.nano_cpus = 1'000'000'000;
        return policy;
    }
    return std::nullopt;
}

std::vector<std::string> known_images()
{
    return {"stdlib", "data"};
}

std::vector<std::string> box_command(double timeout_s)
{
    return {"timeout", "-s", "KILL", format_number(timeout_s + limits::k_box_timer_margin_s),
            "python3", "-I", "-B", "-u", "-"};
}

}  // namespace pybox::proto
