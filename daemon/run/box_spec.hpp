// The spec of one box (engine/box_engine.hpp's BoxSpec), built from the fixed BoxPolicy and the
// box's identity: its labels, its fixed environment and host name. Pure.
#pragma once

#include "daemon/engine/box_engine.hpp"
#include "proto/box_policy.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace pybox::daemon {

// Labels every box carries; the sweep only ever touches boxes with this installation's owner.
inline constexpr const char* k_label_owner = "pybox.owner";
inline constexpr const char* k_label_run = "pybox.run";
inline constexpr const char* k_label_expires = "pybox.expires";
// The uid of the user whose run it is (a system pyboxd serves several; docs/install.md).
inline constexpr const char* k_label_user = "pybox.user";

struct BoxIdentity {
    std::string installation_id;
    std::string run_id;
    std::int64_t expires_at = 0;  // unix seconds
    // The run parent PyBox owns (run_cgroup.hpp); empty = the engine's default.
    std::string cgroup_parent;
    std::uint32_t owner_uid = 0;  // the pybox.user label
};

// The labels of a box: owner, run, expiry and user.
std::vector<std::pair<std::string, std::string>> box_labels(const BoxIdentity& identity);

// The box's host name; the engine also puts it in the environment as HOSTNAME.
inline constexpr const char* k_box_hostname = "pybox";

// The fixed environment of the first process: nothing from the host or the daemon. The
// engine adds HOSTNAME=<k_box_hostname> and nothing else (the images set no ENV; Tty is off).
std::vector<std::string> box_environment();

// The box: the image by ID, `command` as its first process, the policy's settings, the run
// parent and the labels of `identity`, named "pybox-<run id>".
engine::BoxSpec make_box_spec(const proto::BoxPolicy& policy, const std::string& image_id,
                              const std::vector<std::string>& command, const BoxIdentity& identity);

}  // namespace pybox::daemon
