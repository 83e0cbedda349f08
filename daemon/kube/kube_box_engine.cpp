#include "daemon/kube/kube_box_engine.hpp"

#include "common/api_error_codes.hpp"
#include "common/ids.hpp"
#include "common/limits.hpp"
#include "daemon/kube/cluster_checks.hpp"
#include "daemon/kube/cluster_probe.hpp"
#include "daemon/kube/environment_report.hpp"
#include "daemon/kube/kube_attach.hpp"
#include "daemon/kube/kube_status.hpp"
#include "daemon/kube/kubelet_resources.hpp"
#include "daemon/kube/network_policy.hpp"
#include "daemon/kube/pod_end_wait.hpp"
#include "daemon/kube/pod_spec.hpp"
#include "daemon/kube/pod_state.hpp"
#include "daemon/kube/summary_sampler.hpp"
#include "proto/box_policy.hpp"
#include "proto/receipt.hpp"
#include "util/text.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cmath>
#include <utility>

namespace pybox::kube {

using engine::BoxKillOutcome, engine::LaunchFailure, engine::OutputChunk;

namespace {

// A read of the attach stream waits for the program's output however long the run lasts: the
// run bounds it (its deadline, then BoxStreams::cancel()).
constexpr Timeout k_output_wait{std::chrono::hours(24)};

// The waiting reasons of a container the kubelet will not start without help.
bool cannot_start(std::string_view waiting_reason)
{
    for (std::string_view reason : {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                                    "CreateContainerConfigError", "CreateContainerError", "RunContainerError"})
        if (waiting_reason == reason) return true;
    return false;
}

Error no_such_pod(std::string_view id) { return make_error(api_error::k_engine_no_such_object, "no Pod " + std::string(id)); }

// Why a Pod whose box container does not run will never run it, or nullopt: it is on its way.
std::optional<Error> start_failure(const PodFacts& facts)
{
    if (cannot_start(facts.waiting_reason))
        return make_error(api_error::k_engine_error, "the box's container cannot start: " + facts.waiting_reason +
                                                         (facts.waiting_message.empty() ? "" : ": " + facts.waiting_message));
    if (facts.box_ended || facts.phase == "Failed" || facts.phase == "Succeeded")
        return make_error(api_error::k_engine_error, "the Pod ended before its program was delivered (phase " + facts.phase +
                                                         (facts.reason.empty() ? "" : ", " + facts.reason) +
                                                         (facts.message.empty() ? "" : ": " + facts.message) + ")");
    return std::nullopt;
}

// Where a starting Pod is, for a message.
std::string start_progress(const PodFacts& facts)
{
    return "phase " + (facts.phase.empty() ? std::string("not reported") : facts.phase) +
           (facts.node_name.empty() ? ", on no node yet" : ", on node " + facts.node_name) +
           (facts.waiting_reason.empty() ? "" : ", waiting: " + facts.waiting_reason);
}

// Whether an attach was refused only because the box's container does not run yet: the apiserver
// cannot attach to a Pod without a node (400), the kubelet to a Pod it has not yet heard of (404
// "pod does not exist": measured for seconds after the apiserver restarted, while the kubelet's
// watch came back), nor to a container before its runtime runs it (500 "container box not
// found"). The apiserver's own 404 for a Pod it does not have says `pods "NAME" not found`.
bool not_started_yet(const Error& error)
{
    const std::string_view message = error.message;
    return message.find("does not have a host assigned") != std::string_view::npos ||
           message.find("pod does not exist") != std::string_view::npos ||
           message.find("container " + std::string(k_box_container) + " not found") != std::string_view::npos;
}

}  // namespace

// The attach stream of a launched box: output chunks as they come, the program written as one
// fed frame (proto::fed_program_frame), and the kill line (KubeBoxEngine::kill_box).
class KubeBoxStreams final : public engine::BoxStreams {
public:
    KubeBoxStreams(KubeBoxEngine& engine, std::string id, std::unique_ptr<AttachSession> session)
        : m_engine(engine), m_id(std::move(id)), m_session(std::move(session))
    {
        m_engine.m_attached[m_id] = this;
    }
    ~KubeBoxStreams() override { m_engine.m_attached.erase(m_id); }
    KubeBoxStreams(const KubeBoxStreams&) = delete;
    KubeBoxStreams& operator=(const KubeBoxStreams&) = delete;

    // The whole input at once: the frame's length tells the first process where it ends.
    net::awaitable<Expected<void>> write_stdin(std::string_view bytes, Timeout timeout) override
    {
        m_writing = true;
        auto written = co_await m_session->write_stdin(proto::fed_program_frame(bytes), timeout);
        m_writing = false;
        co_return written;
    }
    // Nothing to send: the frame's length ended the program's input, and stdin stays open for
    // the kill line.
    Expected<void> close_stdin() override { return {}; }

    // The program's output: the fed first process's environment report is taken off first.
    net::awaitable<Expected<std::vector<OutputChunk>>> read_output() override
    {
        std::vector<OutputChunk> chunks;
        while (chunks.empty() && !m_ended) {
            auto chunk = co_await m_session->read(k_output_wait);
            if (!chunk) co_return chunk.error();
            if (!*chunk) {
                m_ended = true;  // the container's process ended: the apiserver closed the attach
            } else if (auto part = m_environment.program_part(std::move(**chunk))) {
                chunks.push_back(std::move(*part));
            }
        }
        co_return chunks;
    }
    // The attach protocol's breaches are errors of read_output(), never a partial unit.
    std::optional<std::string> malformed() const override { return std::nullopt; }
    void cancel() override { m_session->cancel(); }
    engine::EnvironmentReport environment() const override { return m_environment.report(); }

    // Whether the apiserver ended the attach, as it does when the container's process ends.
    bool ended() const { return m_ended; }
    // The kill line with the box's kill nonce (made at its first kill, kept in the engine's record
    // of the box until it is removed), unless the program is still being written (one write at a time).
    net::awaitable<Expected<void>> send_kill(Timeout timeout)
    {
        if (m_writing)
            co_return make_error(api_error::k_engine_error, "the program is still being written to " + m_id);
        auto* asked = m_engine.asked_for(m_id);
        if (asked == nullptr) co_return no_such_pod(m_id);
        if (asked->kill_nonce.empty()) asked->kill_nonce = random_id_128();
        co_return co_await m_session->write_stdin(proto::fed_kill_line(asked->kill_nonce), timeout);
    }

private:
    KubeBoxEngine& m_engine;
    std::string m_id;
    std::unique_ptr<AttachSession> m_session;
    EnvironmentReportSplitter m_environment;
    bool m_writing = false;
    bool m_ended = false;
};

namespace {

// A box's end on a cluster: the watch of its Pod (pod_end_wait.hpp), and the kubelet's summary of
// its container sampled until then (summary_sampler.hpp), which is its resources().
class KubeBoxEnd final : public engine::BoxEnd {
public:
    KubeBoxEnd(std::unique_ptr<PodEndWait> wait, std::shared_ptr<SummarySampler> sampler)
        : m_wait(std::move(wait)), m_sampler(std::move(sampler))
    {
    }
    ~KubeBoxEnd() override { m_sampler->stop(); }
    KubeBoxEnd(const KubeBoxEnd&) = delete;
    KubeBoxEnd& operator=(const KubeBoxEnd&) = delete;

    net::awaitable<Expected<void>> ended(Timeout timeout) override
    {
        auto end = co_await m_wait->ended(timeout);
        if (end) m_sampler->stop();
        co_return end;
    }
    void cancel() override
    {
        m_wait->cancel();
        m_sampler->stop();
    }
    std::optional<ResourceObservation> resources() const override { return sampled_resources(m_sampler->reads()); }

private:
    std::unique_ptr<PodEndWait> m_wait;
    std::shared_ptr<SummarySampler> m_sampler;
};

}  // namespace

KubeBoxEngine::KubeBoxEngine(ClientSource client, ImageSource images, KubeBoxSettings settings)
    : m_client(std::move(client)), m_images(std::move(images)), m_settings(std::move(settings))
{
}

std::string KubeBoxEngine::pods_path() const
{
    return "/api/v1/namespaces/" + m_settings.namespace_name + "/pods";
}

std::string KubeBoxEngine::pod_path(std::string_view name) const
{
    return pods_path() + "/" + std::string(name);
}

net::awaitable<Expected<engine::CreatedBox>> KubeBoxEngine::create_box(const engine::BoxSpec& spec, Timeout timeout)
{
    auto client = m_client();
    if (!client) co_return client.error();
    const auto image = m_images(spec.image_id);
    if (!image)
        co_return make_error(api_error::k_engine_error,
                             "the image " + spec.image_id + " was not pushed to this cluster's registry (`pybox vm start` pushes it)");
    std::string owner;
    for (const auto& [key, value] : spec.labels)
        if (key == k_owner_label) owner = value;
    auto network_problem = co_await check_network_policy(**client, owner, timeout);
    if (!network_problem) co_return network_problem.error();
    engine::BoxSpec fed = spec;
    fed.command = proto::fed_box_command(spec.command, spec.policy.tmpfs_bytes);
    const auto box_timer = std::chrono::ceil<std::chrono::seconds>(std::chrono::duration<double>(spec.box_timer_s));
    auto seccomp = seccomp_for(spec);
    auto* profile = std::get_if<std::string>(&seccomp);
    PodSettings settings{image->reference, profile != nullptr ? *profile : std::string(),
                         (box_timer + k_pod_start_allowance).count(), m_settings.node};
    AskedPod asked{make_pod(fed, settings), spec.policy.pids, deny_all_policy_name(owner),
                   std::move(*network_problem), MonoClock::now(), settings.seccomp_localhost_profile,
                   std::nullopt, {}, {}, std::nullopt};
    if (auto* missing = std::get_if<MissingProfile>(&seccomp)) asked.runtime_default_because = std::move(*missing);
    const json::value body = asked.pod;
    auto answer = co_await (*client)->call_json(http::verb::post, pods_path(), &body, timeout);
    if (!answer) co_return answer.error();
    const auto facts = pod_facts(*answer);
    if (facts.uid.empty())
        co_return make_error(api_error::k_engine_protocol, "the apiserver's answer to the Pod's creation names no UID");
    auto id = pod_ref_id(PodRef{spec.name, facts.uid});
    asked.uid = facts.uid;
    m_asked.insert_or_assign(spec.name, std::move(asked));
    co_return engine::CreatedBox{std::move(id), {}};
}

std::variant<std::string, MissingProfile> KubeBoxEngine::seccomp_for(const engine::BoxSpec& spec)
{
    const auto now = MonoClock::now();
    // A Pod made again after its node lacked the profile; the others, when known beforehand to
    // go to a node seen without it (the entry's node: the scheduler places the others later).
    if (auto remade = m_remakes.extract(spec.name)) return std::move(remade.mapped());
    std::erase_if(m_remakes, [now](const auto& remake) { return now - remake.second.seen >= k_missing_profile_memory; });
    if (const auto* missing = m_missing_profile.lacking(m_settings.node, now)) return *missing;
    return spec.policy.seccomp + ".json";
}

net::awaitable<Expected<engine::BoxInspection>> KubeBoxEngine::inspect_box(std::string_view id, Timeout timeout)
{
    const auto ref = parse_pod_ref(id);
    if (!ref) co_return no_such_pod(id);
    // The version the end wait saw the box's end in is its last word on the container.
    if (const auto* asked = asked_for(id); asked != nullptr && asked->ended_pod)
        co_return inspect_pod(*asked->ended_pod, asked->kill_nonce);
    auto client = m_client();
    if (!client) co_return client.error();
    auto pod = co_await read_pod(**client, *ref, timeout);
    if (!pod) co_return pod.error();
    // The record may have gone meanwhile (the box removed): no kill nonce then.
    const auto* asked = asked_for(id);
    co_return inspect_pod(std::move(*pod), asked != nullptr ? std::string_view(asked->kill_nonce) : "");
}

engine::SettingsCheck KubeBoxEngine::check_settings(const engine::BoxSpec& spec,
                                                    const engine::BoxInspection& inspection) const
{
    const auto asked = m_asked.find(spec.name);
    if (asked == m_asked.end()) {
        engine::SettingsCheck unknown;
        unknown.mismatches.push_back({"metadata.name", spec.name, "a Pod this daemon did not create"});
        return unknown;
    }
    auto check = check_pod(asked->second.pod, inspection.raw);
    const auto& because = asked->second.runtime_default_because;
    check.record["seccomp_fallback"] = because ? json::value(missing_profile_record(*because)) : json::value(nullptr);
    const auto& network = asked->second;
    check.record["network_policy"] = json::object{{"name", network.network_policy},
                                                  {"deny_all", !network.network_problem.has_value()}};
    if (network.network_problem)
        check.mismatches.push_back({"NetworkPolicy " + network.network_policy, "deny all", *network.network_problem});
    // The node's podPidsLimit as its kubelet's configz gave it, once read (node_problem()).
    const std::string node = pod_facts(inspection.raw).node_name;
    const auto pids = m_node_pids.find(node);
    check.record["node_pids_limit"] = json::object{
        {"node", node},
        {"read", pids != m_node_pids.end()},
        {"pod_pids_limit", pids != m_node_pids.end() && pids->second ? json::value(*pids->second) : json::value(nullptr)}};
    return check;
}

net::awaitable<Expected<std::optional<std::string>>> KubeBoxEngine::check_network_policy(KubeClient& client,
                                                                                        std::string_view owner,
                                                                                        Timeout timeout)
{
    const std::string policies = "/apis/networking.k8s.io/v1/namespaces/" + m_settings.namespace_name + "/networkpolicies";
    const std::string path = policies + "/" + deny_all_policy_name(owner);
    auto held = co_await client.call_json(http::verb::get, path, nullptr, timeout);
    if (!held && held.error().code == api_error::k_engine_no_such_object) {
        const json::value policy = deny_all_policy(owner);
        auto made = co_await client.call_json(http::verb::post, policies, &policy, timeout);
        // Another run may have made it in between (409): read that one.
        if (made) {
            held = std::move(made);
        } else {
            held = co_await client.call_json(http::verb::get, path, nullptr, timeout);
        }
    }
    if (!held) co_return held.error();
    co_return deny_all_problem(*held, owner);
}

net::awaitable<Expected<json::value>> KubeBoxEngine::read_pod(KubeClient& client, const PodRef& ref, Timeout timeout)
{
    auto pod = co_await client.call_json(http::verb::get, pod_path(ref.name), nullptr, timeout);
    if (!pod) co_return pod.error();
    if (pod_facts(*pod).uid != ref.uid) co_return no_such_pod(pod_ref_id(ref));
    co_return pod;
}

KubeBoxEngine::AskedPod* KubeBoxEngine::asked_for(std::string_view id)
{
    const auto ref = parse_pod_ref(id);
    const auto asked = ref ? m_asked.find(ref->name) : m_asked.end();
    return asked != m_asked.end() && asked->second.uid == ref->uid ? &asked->second : nullptr;
}

net::awaitable<boost::system::result<std::unique_ptr<AttachSession>, LaunchFailure>> KubeBoxEngine::attach_once_started(
    KubeClient& client, const PodRef& ref, const AskedPod& asked, Timeout timeout)
{
    using Step = LaunchFailure::Step;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string last_seen = "no answer";
    for (int refused = 0;; ++refused) {
        const auto left = std::chrono::duration_cast<Timeout>(deadline - std::chrono::steady_clock::now());
        if (left <= Timeout::zero())
            co_return LaunchFailure{Step::start,
                                    make_error(api_error::k_engine_timeout, "the Pod " + pod_ref_id(ref) +
                                                                                " did not start within " +
                                                                                std::to_string(timeout.count()) +
                                                                                " ms (last seen: " + last_seen + ")")};
        auto session = co_await AttachSession::open(client, m_settings.namespace_name, ref.name, k_box_container,
                                                    std::min(left, limits::k_query_timeout));
        if (session) co_return std::move(*session);
        if (!not_started_yet(session.error())) co_return LaunchFailure{Step::start, session.error()};
        if (refused % k_attaches_per_pod_read == 0) {
            // Not attachable yet: the Pod says whether it is on its way.
            auto pod = co_await read_pod(client, ref, std::min(left, limits::k_query_timeout));
            if (!pod) co_return LaunchFailure{Step::start, pod.error()};
            const auto facts = pod_facts(*pod);
            if (lacks_localhost_profile(facts, asked.seccomp_profile)) {
                MissingProfile missing{facts.node_name, MonoClock::now(), WallClock::now(),
                                       facts.waiting_reason + ": " + facts.waiting_message};
                m_missing_profile.note(missing);
                m_remakes.insert_or_assign(ref.name, missing);
                co_return LaunchFailure{Step::start,
                                        make_error(api_error::k_engine_error,
                                                   "the node " + facts.node_name + " has no seccomp profile " +
                                                       asked.seccomp_profile + " in its kubelet's seccomp root (" +
                                                       missing.kubelet_said + ")"),
                                        true};
            }
            if (auto failure = start_failure(facts)) co_return LaunchFailure{Step::start, std::move(*failure)};
            last_seen = start_progress(facts) + "; the attach: " + session.error().message;
        }
        co_await pause(k_attach_retry_interval);
    }
}

net::awaitable<Expected<std::string>> KubeBoxEngine::verify_node(KubeClient& client, const PodRef& ref,
                                                                 const AskedPod& asked, Timeout timeout)
{
    std::string node = m_settings.node;
    if (node.empty()) {
        auto pod = co_await read_pod(client, ref, timeout);
        if (!pod) co_return pod.error();
        node = pod_facts(*pod).node_name;
    }
    if (auto problem = co_await node_problem(client, node, asked.pids))
        co_return make_error(api_error::k_engine_error, *problem);
    co_return node;
}

net::awaitable<std::optional<std::string>> KubeBoxEngine::node_problem(KubeClient& client, const std::string& node,
                                                                      std::int64_t pids)
{
    if (!m_node_pids.contains(node)) {
        auto limit = co_await read_pod_pids_limit(client, node, limits::k_query_timeout);
        if (!limit) co_return std::nullopt;  // not readable (no nodes/proxy access): not a reason
        m_node_pids[node] = *limit;
    }
    // Read even when the entry accepts the node's: the receipt says the figure.
    const auto& limit = m_node_pids[node];
    if (m_settings.accept_node_pids_limit || (limit && *limit > 0 && *limit <= pids)) co_return std::nullopt;
    co_return "the node " + node + " lets a Pod have " + (limit && *limit > 0 ? std::to_string(*limit) : "any number of") +
        " processes (its kubelet's podPidsLimit), more than the policy's " + std::to_string(pids) +
        "; set the node's podPidsLimit to at most that, or the entry's \"pids_limit\": \"node\" to accept the node's";
}

net::awaitable<boost::system::result<engine::LaunchedBox, LaunchFailure>> KubeBoxEngine::launch_box(
    std::string_view id, engine::LaunchTimeouts timeouts)
{
    using Step = LaunchFailure::Step;
    auto client = m_client();
    if (!client) co_return LaunchFailure{Step::start, client.error()};
    const auto ref = parse_pod_ref(id);
    const auto asked = ref ? m_asked.find(ref->name) : m_asked.end();
    if (asked == m_asked.end()) co_return LaunchFailure{Step::start, no_such_pod(id)};
    const auto start_asked = asked->second.asked;
    // A Pod's start includes its image's pull on the node: the start budget is at least the
    // allowance activeDeadlineSeconds gives it.
    const auto start_budget = std::max<Timeout>(timeouts.start, k_pod_start_allowance);
    auto session = co_await attach_once_started(**client, *ref, asked->second, start_budget);
    if (!session) co_return session.error();
    auto node = co_await verify_node(**client, *ref, asked->second, timeouts.connect);
    if (!node) {
        co_await (*session)->close(limits::k_query_timeout);
        co_return LaunchFailure{Step::start, node.error()};
    }
    auto read = [this, ref = *ref](Timeout read_timeout) -> net::awaitable<Expected<json::value>> {
        auto reader = m_client();
        if (!reader) co_return reader.error();
        co_return co_await read_pod(**reader, ref, read_timeout);
    };
    auto keep_end = [this, id = std::string(id)](json::value pod) {
        // Kept only where it is final: a terminated container's state never changes.
        auto* record = asked_for(id);
        if (record != nullptr && box_container_state(pod).status == "exited") record->ended_pod = std::move(pod);
    };
    // No temporaries in a full-expression with a co_await: GCC 12's coroutine frame freed them early.
    const auto executor = co_await net::this_coro::executor;
    SummaryPod summary_pod{m_settings.namespace_name, ref->name, ref->uid};
    auto sampler = SummarySampler::start(executor, m_client, std::move(summary_pod), std::string(k_box_container),
                                         std::move(*node));
    auto wait = std::make_unique<PodEndWait>(m_client, std::move(read), pods_path(), *ref, std::move(keep_end));
    co_return engine::LaunchedBox{std::make_unique<KubeBoxStreams>(*this, std::string(id), std::move(*session)),
                                  std::make_unique<KubeBoxEnd>(std::move(wait), std::move(sampler)),
                                  start_asked};
}

net::awaitable<Expected<BoxKillOutcome>> KubeBoxEngine::kill_box(std::string_view id, Timeout timeout)
{
    // An ended attach means an ended process (the apiserver ends it then, before the kubelet
    // reports the exit): nothing to ask the apiserver.
    if (attach_ended(id)) co_return BoxKillOutcome::already_ended;
    if (const auto attached = m_attached.find(id); attached != m_attached.end()) {
        auto sent = co_await attached->second->send_kill(timeout);
        if (sent) co_return BoxKillOutcome::killed;
    }
    // No attach to write to: its status says whether the box ended (the attach may have ended
    // meanwhile); only a box still running is deleted.
    auto inspected = co_await inspect_box(id, timeout);
    if (!inspected && inspected.error().code == api_error::k_engine_no_such_object) co_return BoxKillOutcome::already_ended;
    if (inspected && inspected->state.exit_code && !inspected->state.running) co_return BoxKillOutcome::already_ended;
    if (attach_ended(id)) co_return BoxKillOutcome::already_ended;
    auto client = m_client();
    if (!client) co_return client.error();
    auto deleted = co_await delete_pod(**client, id, timeout);
    if (!deleted) co_return deleted.error();
    co_return BoxKillOutcome::killed;
}

bool KubeBoxEngine::attach_ended(std::string_view id) const
{
    const auto attached = m_attached.find(id);
    return attached != m_attached.end() && attached->second->ended();
}

net::awaitable<Expected<void>> KubeBoxEngine::delete_pod(KubeClient& client, std::string_view id, Timeout timeout)
{
    const auto ref = parse_pod_ref(id);
    if (!ref) co_return Expected<void>{};  // never a Pod's id: there is nothing to delete
    const json::value options{{"apiVersion", "v1"},
                              {"kind", "DeleteOptions"},
                              {"gracePeriodSeconds", 0},
                              {"preconditions", {{"uid", ref->uid}}}};
    auto reply = co_await client.call(http::verb::delete_, pod_path(ref->name), &options, timeout);
    if (!reply) co_return reply.error();
    // 404: no such Pod; 409: the name is another Pod's (the precondition failed): ours is gone.
    if ((reply->status >= 200 && reply->status < 300) || reply->status == 404 || reply->status == 409)
        co_return Expected<void>{};
    co_return status_error(reply->what, reply->status, reply->body);
}

net::awaitable<Expected<void>> KubeBoxEngine::remove_box(std::string_view id, Timeout timeout)
{
    auto client = m_client();
    if (!client) co_return client.error();
    auto deleted = co_await delete_pod(**client, id, timeout);
    if (!deleted) co_return deleted.error();
    if (asked_for(id) != nullptr) m_asked.erase(parse_pod_ref(id)->name);
    co_return Expected<void>{};
}

net::awaitable<Expected<std::vector<engine::ListedBox>>> KubeBoxEngine::list_boxes(const std::vector<std::string>& labels,
                                                                                  Timeout timeout)
{
    auto client = m_client();
    if (!client) co_return client.error();
    std::string selector;
    for (const auto& label : labels) selector += (selector.empty() ? "" : ",") + label;
    auto list = co_await (*client)->call_json(http::verb::get, pods_path() + "?labelSelector=" + util::url_encode(selector),
                                              nullptr, timeout);
    if (!list) co_return list.error();
    co_return listed_pods(*list);
}

std::string KubeBoxEngine::output_provenance() const
{
    return "target byte streams via the apiserver's bounded attach websocket (its stdout and stderr channels, the "
           "feeder's environment report taken off the front of stdout); untrusted content";
}

std::vector<std::pair<std::string, std::string>> sealed_pod_unknowns()
{
    return {
        {"tmpfs_noexec", "/tmp is a memory-backed emptyDir with the policy's size limit, which Kubernetes cannot mount "
                         "noexec, nodev or nosuid"},
        {std::string(proto::k_unknown_network_enforcement), "the Pod has a network of its own (Kubernetes gives every Pod one); PyBox's deny-all "
                                "NetworkPolicy selects it, but whether the cluster's network plugin enforces it is not "
                                "observable from the API"},
        {"masked_paths", "the node's container runtime masks its own default /proc and /sys paths, not the policy's "
                         "longer list (a Pod cannot name paths to mask)"},
        {"pids_limit", "a Pod's process limit is its node's podPidsLimit, which the Pod cannot set; the figure the "
                       "node's kubelet gave (configz) is observed.effective_policy.node_pids_limit, and whether the "
                       "node enforces it on this Pod is not observed"},
        {std::string(proto::k_unknown_node_cleanup),
         "the Pod was deleted and the API no longer has it (404); the node's removal of its containers (the kubelet's "
         "garbage collection, up to a minute later) is not observed"},
        {"engine_timestamps", "a Pod's container status gives its start and end to the second only; the durations "
                              "are the daemon's"},
    };
}

}  // namespace pybox::kube
