// The container-create body for one box, built from the fixed BoxPolicy. Pure.
#pragma once

#include "proto/box_policy.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

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
    // HostConfig.CgroupParent: the run parent PyBox owns (run_cgroup.hpp); empty = the engine's default.
    std::string cgroup_parent;
    std::uint32_t owner_uid = 0;  // the pybox.user label
};

// The labels of a box (`Labels`): owner, run, expiry and user.
boost::json::object box_labels(const BoxIdentity& identity);

// The box's host name (`Hostname`); the engine also puts it in the environment as HOSTNAME.
inline constexpr const char* k_box_hostname = "pybox";

// The fixed environment of the first process (`Env`): nothing from the host or the daemon. The
// engine adds HOSTNAME=<k_box_hostname> and nothing else (the images set no ENV; Tty is off).
std::vector<std::string> box_environment();

// How the box is run beyond its policy: the OCI runtime the daemon is configured with.
struct BoxRuntime {
    std::string name = "runc";
};

// HostConfig.SecurityOpt: "no-new-privileges" (when the policy asks for it) and
// "seccomp=<PyBox's profile, its JSON text>" (proto/seccomp_profile.hpp).
boost::json::array box_security_options(const proto::BoxPolicy& policy);
// HostConfig.Ulimits: `nofile` and `core`, each with soft = hard, so a program can lower them
// but never raise them.
boost::json::array box_ulimits(const proto::BoxPolicy& policy);

// POST /containers/create body: the image by ID, the command, stdin attached once, no TTY,
// the labels, the runtime, and HostConfig from the policy (AutoRemove stays false; /dev/shm
// gets the same size as /tmp).
boost::json::object make_box_spec(const proto::BoxPolicy& policy, const BoxRuntime& runtime,
                                  const std::string& image_id, const std::vector<std::string>& command,
                                  const BoxIdentity& identity);

}  // namespace pybox::daemon
