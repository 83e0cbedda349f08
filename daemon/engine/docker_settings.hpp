// How the Docker Engine API writes a box's settings, both ways: the create body made from a
// BoxSpec (POST /containers/create), and the check of what the engine then reports
// (GET /containers/{id}/json) against that spec, field by field. Anything missing, different,
// or widened (a bind, a device, a capability, host namespaces, privileged, seccomp or
// no-new-privileges turned off) is a mismatch. The seccomp profile is verified by the SHA-256
// of the text the engine read back: it must be the spec's (PyBox's own,
// proto/seccomp_profile.hpp), not `unconfined`, another profile or none. Pure.
#pragma once

#include "daemon/engine/box_engine.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace pybox::engine {

// The create body: the image by ID, the command, stdin attached once, no TTY, the labels, the
// OCI `runtime` the engine's boxes run under (config.json's "runtime"), and HostConfig from the
// policy (AutoRemove stays false; /dev/shm gets the same size as /tmp; SIGKILL to stop).
boost::json::object docker_create_body(const BoxSpec& spec, std::string_view runtime);

// HostConfig.LogConfig's Type: the engine keeps no copy of a box's output (PyBox captures it).
inline constexpr std::string_view k_no_log_driver = "none";
// HostConfig.NanoCpus: the policy's cpu_millis in billionths of a core.
std::int64_t docker_nano_cpus(const proto::BoxPolicy& policy);
// HostConfig.Tmpfs's options: the size in bytes, then the policy's flags, e.g.
// "size=16777216,noexec,nodev,nosuid".
std::string docker_tmpfs_options(const proto::BoxPolicy& policy);
// HostConfig.SecurityOpt: "no-new-privileges" (when the policy asks for it) and
// "seccomp=<PyBox's profile, its JSON text>".
boost::json::array docker_security_options(const proto::BoxPolicy& policy);
// HostConfig.Ulimits: `nofile` and `core`, each with soft = hard, so a program can lower them
// but never raise them.
boost::json::array docker_ulimits(const proto::BoxPolicy& policy);

// The check of an inspect answer against the spec, and the record of what it read: the fields
// the check read, as the engine reported them, plus "mismatches". A "seccomp=<profile>"
// security option is recorded as "seccomp=sha256:<hex of the profile text>", never as the text.
SettingsCheck check_docker_settings(const BoxSpec& spec, std::string_view runtime, const boost::json::value& inspected);

}  // namespace pybox::engine
