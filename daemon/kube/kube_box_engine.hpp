// KubeBoxEngine: the BoxEngine (daemon/engine/box_engine.hpp) of a Kubernetes cluster
// (docs/kubernetes.md): a box is a Pod of one container, made for one run and never reused.
//
// - A box's id is "<pod name>/<pod uid>" (pod_state.hpp's PodRef): the name addresses the API
//   calls, the UID makes sure they reach that Pod and no later one of the same name (a delete
//   carries it as a precondition), and the receipt's container_id names both.
// - create_box() first reads the owner's deny-all NetworkPolicy (network_policy.hpp), making it
//   when there is none; one that is not exactly that is a mismatch of check_settings(). Then it
//   POSTs the Pod of pod_spec.hpp: the spec's command run behind the fed box
//   command (proto/box_policy.hpp), which sets the open-files and core limits Kubernetes cannot,
//   takes the program as one length-prefixed frame (stdin cannot be closed on Kubernetes 1.20's
//   attach protocol) and kills the program on a kill line; the image by its pushed reference
//   (REGISTRY/PREFIX/NAME@sha256:DIGEST, never a tag), activeDeadlineSeconds the box timer plus
//   k_pod_start_allowance as a backstop; the seccomp profile PyBox's own as a Localhost profile,
//   or RuntimeDefault for a Pod made again because its node lacked that profile, and for the
//   Pods of the entry's node while it is remembered without it (node_seccomp.hpp). What was asked
//   is kept until the box is removed, for check_settings(), which compares the Pod the apiserver
//   read back (after admission) with it, and records why a Pod asked for RuntimeDefault
//   (effective_policy.seccomp_fallback).
// - launch_box(): the kubelet starts the container by itself. The launch asks to attach
//   (kube_attach.hpp) every k_attach_retry_interval from the Pod's admission, without waiting
//   for the Pod's status to say the container runs: the kubelet refuses (500 "container box not
//   found", 404 "pod does not exist", 400 "does not have a host assigned") until its runtime runs
//   it. After every k_attaches_per_pod_read refusals it reads the Pod, so that a container that
//   cannot start (ErrImagePull, CreateContainerError, ...) or a Pod that fails (OutOfcpu) fails
//   the start with the kubelet's reason; one whose node has no file for the Localhost profile
//   (recognised from its status: node_seccomp.hpp) fails it asking for the box to be made again
//   (LaunchFailure::remake), and the node is remembered. Once attached, the node's podPidsLimit
//   (its kubelet's configz, read once per node) must not be above the policy's pids. The fed
//   first process writes nothing before its program but its report of the program's
//   environment, the first line of stdout, which the streams take off the output
//   (environment_report.hpp) and give as their environment(): no output is missed, and none is
//   the feeder's. The image the node ran (the container status's imageID, which the kubelet
//   names only once the container runs) is checked against the recorded manifest digest by
//   check_settings() on the ended box. The end is the first version of the Pod whose status
//   shows it, read by a watch of the Pod (pod_end_wait.hpp): the exit code and OOMKilled come
//   from there, never from the attach's status channel (attach_channels.hpp). That version is
//   kept, and inspect_box() answers from it without reading the Pod again once it shows the box
//   container terminated (a terminated container's state never changes). From the launch until
//   the end is seen (or the wait is stopped) the box's end samples the kubelet's summary of the
//   node (summary_sampler.hpp) and gives what it found as its resources() (kubelet_resources.hpp):
//   no watcher runs on a node.
// - kill_box() first looks at the box's attach, without an API call: one that ended (its process
//   ended: the apiserver closes the attach then, before the kubelet reports the exit) means the
//   box was already ended; an open one gets the kill line: the kill byte and a nonce of 128
//   random bits made at the box's first kill (proto::fed_kill_line). The fed first process
//   records the nonce in the container's termination log, then SIGKILLs the program, and the
//   box's PID 1 exits 137, as a Docker kill makes it. inspect_box() compares the container's
//   termination message with that record (pod_state.hpp): the state's kill_acknowledged. The
//   program never sees the nonce, so it can erase the record but not forge it. Only without an
//   attach to write to, or when the write failed, is the Pod inspected: a box whose status shows
//   it ended was already ended; a running one is deleted at once. remove_box() deletes the Pod (grace 0, the UID as
//   precondition); a Pod the apiserver no longer has (404, or another UID) is removed. That only
//   confirms the API object: the node's cleanup of its containers is not observed here.
//
// Errors are the engine's (kube_client.hpp, kube_status.hpp). Runs its calls as coroutines on
// the executor of whoever awaits them; not thread-safe; must outlive every box it launched.
#pragma once

#include "common/clock.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/kube/kube_client.hpp"
#include "daemon/kube/node_seccomp.hpp"
#include "daemon/kube/pod_state.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace pybox::kube {

class AttachSession;
class KubeBoxStreams;

// How long a Pod may take from its admission to its program's start (scheduling, the image's
// pull on the node, the container's start), beyond the box timer: activeDeadlineSeconds counts
// from the Pod's start, not the program's.
inline constexpr std::chrono::seconds k_pod_start_allowance{60};
// How often a launch asks to attach while the kubelet's runtime does not run the container yet
// (the program's delivery waits for it), and after how many refused attaches it reads the Pod
// to see whether it is still on its way.
inline constexpr std::chrono::milliseconds k_attach_retry_interval{20};
inline constexpr int k_attaches_per_pod_read = 5;

// An image as a cluster's Pods name it.
struct ClusterImage {
    std::string reference;        // REGISTRY/PREFIX/NAME@sha256:<manifest digest>
    std::string manifest_digest;  // "sha256:..."
};

struct KubeBoxSettings {
    std::string namespace_name;
    // "kubernetes <server> namespace <ns>", for messages and receipts.
    std::string description;
    // The node every Pod is placed on, or empty: the cluster's scheduler places it.
    std::string node;
    // Whether a node's podPidsLimit above the policy's pids is accepted (the entry's
    // "pids_limit": "node"); otherwise such a node fails the start.
    bool accept_node_pids_limit = false;
};

// The parts of the box policy a Pod cannot express and what PyBox cannot observe on a node: the
// receipt's `unknown` keys of every run on a cluster, with their reasons.
std::vector<std::pair<std::string, std::string>> sealed_pod_unknowns();

class KubeBoxEngine final : public engine::BoxEngine {
public:
    // The client, or why there is none (a kubeconfig that cannot be used): asked at every call.
    using ClientSource = std::function<Expected<KubeClient*>()>;
    // The pushed image of a recorded engine image id, or nullopt.
    using ImageSource = std::function<std::optional<ClusterImage>(std::string_view image_id)>;

    KubeBoxEngine(ClientSource client, ImageSource images, KubeBoxSettings settings);
    KubeBoxEngine(const KubeBoxEngine&) = delete;
    KubeBoxEngine& operator=(const KubeBoxEngine&) = delete;

    std::string describe() const override { return m_settings.description; }

    net::awaitable<Expected<engine::CreatedBox>> create_box(const engine::BoxSpec& spec, engine::Timeout timeout) override;
    net::awaitable<Expected<engine::BoxInspection>> inspect_box(std::string_view id, engine::Timeout timeout) override;
    engine::SettingsCheck check_settings(const engine::BoxSpec& spec, const engine::BoxInspection& inspection) const override;
    net::awaitable<boost::system::result<engine::LaunchedBox, engine::LaunchFailure>> launch_box(
        std::string_view id, engine::LaunchTimeouts timeouts) override;
    net::awaitable<Expected<engine::BoxKillOutcome>> kill_box(std::string_view id, engine::Timeout timeout) override;
    net::awaitable<Expected<void>> remove_box(std::string_view id, engine::Timeout timeout) override;
    net::awaitable<Expected<std::vector<engine::ListedBox>>> list_boxes(const std::vector<std::string>& labels,
                                                                       engine::Timeout timeout) override;
    std::string output_provenance() const override;
    std::vector<std::pair<std::string, std::string>> always_unknown() const override { return sealed_pod_unknowns(); }
    // The kubelet starts a Pod's container on its own, before the attach delivers the program.
    bool starts_before_delivery() const override { return true; }

    // Forgets the nodes seen without PyBox's seccomp profile (`vm status`): the next Pod on each
    // asks for the profile again.
    void forget_missing_profiles() { m_missing_profile.forget_all(); }

private:
    friend class KubeBoxStreams;

    // What create_box() asked for a box and what was seen of it since, until it is removed.
    struct AskedPod {
        boost::json::object pod;
        std::int64_t pids = 0;                       // the policy's process limit
        std::string network_policy;                  // its name
        std::optional<std::string> network_problem;  // why it is not the owner's deny-all policy
        MonoClock::time_point asked;  // right before the POST: the earliest the box can have started
        std::string seccomp_profile;  // the Localhost profile asked for; empty: RuntimeDefault...
        std::optional<MissingProfile> runtime_default_because;  // ...because its node was seen without it
        std::string uid;         // the Pod's, as the apiserver made it
        std::string kill_nonce;  // made at the box's first kill; empty: never killed
        // The version of the Pod the end wait saw the box container terminated in.
        std::optional<boost::json::value> ended_pod;
    };

    std::string pods_path() const;
    std::string pod_path(std::string_view name) const;
    // The one read of a Pod (GET): "engine_no_such_object" when the name is another Pod's.
    net::awaitable<Expected<boost::json::value>> read_pod(KubeClient& client, const PodRef& ref,
                                                          engine::Timeout timeout);
    // The record of the box `id` (its name and UID), or nullptr.
    AskedPod* asked_for(std::string_view id);
    // Attaches to the box container as soon as the kubelet's runtime runs it (asked again every
    // k_attach_retry_interval while it does not), failing when the Pod says it never will; a node
    // without the Localhost profile the Pod asked for is remembered, and the failure asks for the
    // box to be made again (LaunchFailure::remake), with RuntimeDefault.
    net::awaitable<boost::system::result<std::unique_ptr<AttachSession>, engine::LaunchFailure>> attach_once_started(
        KubeClient& client, const PodRef& ref, const AskedPod& asked, engine::Timeout timeout);
    // The Localhost profile a Pod made now for `spec` asks for, or why it asks for RuntimeDefault.
    std::variant<std::string, MissingProfile> seccomp_for(const engine::BoxSpec& spec);
    // The check of a started box's node before its program is delivered: its podPidsLimit. The
    // node is the entry's, or the Pod's as the apiserver reads it; it is returned.
    net::awaitable<Expected<std::string>> verify_node(KubeClient& client, const PodRef& ref, const AskedPod& asked,
                                                      engine::Timeout timeout);
    // The owner's deny-all NetworkPolicy (network_policy.hpp), made when there is none: why the
    // one the apiserver holds is not it, or nullopt.
    net::awaitable<Expected<std::optional<std::string>>> check_network_policy(KubeClient& client, std::string_view owner,
                                                                              engine::Timeout timeout);
    // Why the Pod's node may not run it: a podPidsLimit above `pids` (read once per node through
    // the node proxy, also when the entry accepts the node's, for the receipt; a limit that
    // cannot be read is not a reason), or nullopt.
    net::awaitable<std::optional<std::string>> node_problem(KubeClient& client, const std::string& node,
                                                            std::int64_t pids);
    net::awaitable<Expected<void>> delete_pod(KubeClient& client, std::string_view id, engine::Timeout timeout);
    // Whether the box's attach was open and the apiserver ended it.
    bool attach_ended(std::string_view id) const;

    ClientSource m_client;
    ImageSource m_images;
    KubeBoxSettings m_settings;
    std::map<std::string, AskedPod, std::less<>> m_asked;          // by Pod name
    std::map<std::string, KubeBoxStreams*, std::less<>> m_attached;  // by box id, while its streams live
    std::map<std::string, std::optional<std::int64_t>> m_node_pids;  // podPidsLimit by node, once read
    MissingProfileNodes m_missing_profile;
    // Pods to be made again (by name) because their node lacked the profile, until made.
    std::map<std::string, MissingProfile, std::less<>> m_remakes;
};

}  // namespace pybox::kube
