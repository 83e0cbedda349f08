// The check between create and start: the effective settings the engine reports for a box
// (GET /containers/{id}/json) must equal the BoxPolicy PyBox configured, field by field.
// Anything missing, different, or widened (a bind, a device, a capability, host namespaces,
// privileged, seccomp or no-new-privileges turned off) is a mismatch, and the box is removed
// without being started. The seccomp profile is verified by the SHA-256 of the text the engine
// read back: it must be PyBox's own (proto/seccomp_profile.hpp), not `unconfined`, another
// profile or none. Pure.
#pragma once

#include "daemon/run/box_spec.hpp"
#include "proto/box_policy.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace pybox::daemon {

struct PolicyMismatch {
    std::string field;     // e.g. "HostConfig.Memory"
    std::string expected;  // serialized JSON
    std::string observed;  // serialized JSON, or "missing"
};

std::vector<PolicyMismatch> check_effective_policy(const proto::BoxPolicy& policy, const BoxRuntime& runtime,
                                                   const BoxIdentity& identity,
                                                   const boost::json::value& inspected);

// The fields the check read, as the engine reported them, plus "mismatches": the receipt's
// observed.effective_policy. A "seccomp=<profile>" security option is recorded as
// "seccomp=sha256:<hex of the profile text>", never as the text.
boost::json::object effective_policy_record(const boost::json::value& inspected,
                                            const std::vector<PolicyMismatch>& mismatches);

}  // namespace pybox::daemon
