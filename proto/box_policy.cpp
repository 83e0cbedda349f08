#include "proto/box_policy.hpp"

#include "common/limits.hpp"
#include "proto/seccomp_profile.hpp"
#include "proto/text.hpp"

#include <algorithm>

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
    if (image == "stdlib" || is_own_image_name(image)) {
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

bool is_own_image_name(std::string_view name)
{
    return own_image_name_problem(name).empty();
}

std::string own_image_name_problem(std::string_view name)
{
    const bool charset = !name.empty() && name.size() <= k_max_own_image_name_bytes && name.front() >= 'a' &&
                         name.front() <= 'z' && std::all_of(name.begin(), name.end(), [](char c) {
                             return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                         });
    if (!charset)
        return "An own image's name is 1 to " + std::to_string(k_max_own_image_name_bytes) +
               " characters: a lower-case letter, then lower-case letters, digits and '-' (got \"" +
               printable_excerpt(name) + "\").";
    const auto builtin = known_images();
    if (std::find(builtin.begin(), builtin.end(), name) != builtin.end())
        return "\"" + std::string(name) + "\" is a built-in image; choose another name for an own image.";
    return "";
}

std::vector<std::string> box_command(double timeout_s)
{
    return {"timeout", "-s", "KILL", format_number(timeout_s + limits::k_box_timer_margin_s),
            "python3", "-I", "-B", "-u", "-"};
}

std::vector<std::string> warm_box_command()
{
    return {"sh", "-c", "read -r t && unset PWD && exec timeout -s KILL \"$t\" python3 -I -B -u -"};
}

std::string warm_box_timer_line(double guest_timer_s) { return format_number(guest_timer_s) + "\n"; }

}  // namespace pybox::proto
