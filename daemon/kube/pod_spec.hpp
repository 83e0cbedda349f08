// How the Kubernetes API writes a box, both ways: the sealed Pod made from a BoxSpec (POST
// /api/v1/namespaces/NS/pods), and the check of what the apiserver then holds for it (the POST's
// answer or a GET, after admission plugins and webhooks had their say) against what was asked,
// field by field. The Kubernetes counterpart of daemon/engine/docker_settings.hpp. Pure.
//
// The Pod (issue 30, "The Pod"): one container k_box_container, the image by digest, the spec's
// command, environment, hostname and labels; requests = limits (memory, cpu); uid and gid from the
// policy, runAsNonRoot, a read-only root, no privilege escalation, not privileged, every capability
// dropped, seccomp Localhost with PyBox's profile where the node has it (else RuntimeDefault);
// /tmp the only volume, a memory emptyDir of the policy's size; no service-account token, no
// service links, no host namespaces, restartPolicy Never, terminationGracePeriodSeconds 0 and
// activeDeadlineSeconds as the box timer's backstop; the container's termination message kept
// in the fed box's termination log (proto::k_fed_termination_log, policy File). DNS is left to the apiserver's default
// (ClusterFirst, as the trials ran it): dnsPolicy None needs a nameserver, and with the owner's
// deny-all NetworkPolicy no resolver can be reached anyway.
//
// The check walks the asked Pod: every field PyBox set must read back equal (quantities by value,
// since an apiserver may rewrite "128Mi" in another notation), and every field PyBox did not set is
// a mismatch unless it is one of the apiserver's harmless defaults that pod_spec.cpp lists, with
// the reason each is accepted. So an added container, init or ephemeral container, volume, volume
// mount, environment variable, envFrom, capability, host namespace, runtime class, annotation or
// widened security setting is a mismatch, and so is anything a later Kubernetes adds that this
// code does not know.
#pragma once

#include "daemon/engine/box_engine.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::kube {

struct PodSettings {
    std::string image;                      // "REGISTRY/pybox/NAME@sha256:<64 hex>", never a tag
    std::string seccomp_localhost_profile;  // relative to the kubelet's seccomp root; empty: RuntimeDefault
    std::int64_t active_deadline_s = 0;     // the box timer's backstop
    std::string node_name;                  // empty: the scheduler places the Pod (a cluster without one needs it)
};

inline constexpr std::string_view k_box_container = "box";

// The Pod for `spec` (its name, command, environment, hostname, policy and labels; not its
// image_id, runtime or cgroup_parent: the image is settings.image), as the body of the POST.
// The policy's user must be "UID[:GID]" (a bug otherwise: std::invalid_argument). Every '$' of the
// command and the environment's values is doubled: the kubelet expands $(NAME) there and reads
// "$$" as "$" (measured: a "$$" of the fed box command reached the box as "$").
boost::json::object make_pod(const engine::BoxSpec& spec, const PodSettings& settings);

// The quantities the Pod is written with, in Kubernetes' canonical notation (which the apiserver
// writes back unchanged): bytes with the largest binary suffix that divides them ("128Mi",
// "16Mi", "1000"), cpu in millicores ("500m", "2").
std::string memory_quantity(std::int64_t bytes);
std::string cpu_quantity(std::int64_t millis);
// A quantity's value in thousandths ("500m" is 500, "128Mi" is 134217728000), for quantities of
// the form DIGITS[.DIGITS][m|k|M|G|T|Ki|Mi|Gi|Ti]; nullopt for anything else or beyond int64.
std::optional<std::int64_t> quantity_millis(std::string_view quantity);

// The check of the apiserver's Pod against `asked` (make_pod's), and the record of what it read:
// the Pod's name, uid, labels, annotations and spec as the apiserver holds them (the seccomp
// profile named by its type and file), plus "mismatches". Each mismatch's field is the JSON path
// in the Pod, e.g. "spec.containers[0].securityContext.runAsUser"; `expected` is "absent" for a
// field PyBox did not set, `observed` is "missing" for one the answer lacks. An answer that is not
// an object is the one mismatch "pod". Of an ended Pod, whose status names the image its node ran
// (never before the kubelet's report after the start), the record's "image_id" is that imageID,
// and one that does not end with the asked image's digest is the mismatch k_ran_image_field;
// "image_id" is null before. A box container the apiserver holds with the RuntimeDefault seccomp
// profile leaves the unknown "seccomp_profile": which system calls the node's runtime allows.
inline constexpr std::string_view k_ran_image_field = "status.containerStatuses[box].imageID";
engine::SettingsCheck check_pod(const boost::json::object& asked, const boost::json::value& read_back);

}  // namespace pybox::kube
