#include "tests/integration/pod_watch.hpp"

#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/ids.hpp"
#include "common/process.hpp"
#include "tests/support/cluster_env.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace pybox::test {

namespace json = boost::json;

namespace {

// The kubeconfig argument of every kubectl call here: the cluster's admin.
std::vector<std::string> admin_kubectl()
{
    return {cluster_env("K8S_KUBECTL"), "--kubeconfig", cluster_env("K8S_ADMIN_KUBECONFIG")};
}

std::string pods_path() { return "/api/v1/namespaces/" + cluster_env("K8S_NAMESPACE") + "/pods"; }

// The box container's status in a Pod, or nullptr before the kubelet reported one.
const json::object* box_status(const json::object& pod)
{
    const auto* statuses = pod.at("status").as_object().if_contains("containerStatuses");
    if (statuses == nullptr || statuses->is_null()) return nullptr;
    REQUIRE(statuses->as_array().size() == 1);
    return &statuses->as_array().at(0).as_object();
}

const json::object* terminated_state(const json::object& pod)
{
    const auto* status = box_status(pod);
    if (status == nullptr) return nullptr;
    const auto* terminated = status->at("state").as_object().if_contains("terminated");
    return terminated == nullptr ? nullptr : &terminated->as_object();
}

std::int64_t rfc3339_seconds(const json::value& text)
{
    const auto ns = parse_rfc3339_ns(std::string_view(text.as_string()));
    REQUIRE(ns.has_value());
    return *ns / 1'000'000'000;
}

// Every "kill_nonce" string anywhere in a receipt (the evidence of a kill's acknowledgement).
void collect_kill_nonces(const json::value& value, std::set<std::string>& nonces)
{
    if (const auto* object = value.if_object()) {
        for (const auto& [key, item] : *object) {
            if (key == "kill_nonce" && item.is_string()) nonces.emplace(item.as_string());
            collect_kill_nonces(item, nonces);
        }
    } else if (const auto* array = value.if_array()) {
        for (const auto& item : *array) collect_kill_nonces(item, nonces);
    }
}

// The container ran in this version of the Pod: its status shows it running or ended.
bool container_ran(const json::object& pod)
{
    const auto* status = box_status(pod);
    if (status == nullptr) return false;
    const auto& state = status->at("state").as_object();
    return state.contains("running") || state.contains("terminated");
}

// The Pod's name and UID in a receipt's container_id ("<name>/<uid>").
std::pair<std::string, std::string> pod_of(const json::value& receipt)
{
    const std::string container_id(receipt.at("container_id").as_string());
    const auto slash = container_id.find('/');
    return {container_id.substr(0, slash), slash == std::string::npos ? std::string() : container_id.substr(slash + 1)};
}

std::string version_of(const PodEvent& event)
{
    return event.type + " (resourceVersion " +
           std::string(event.pod.at("metadata").at("resourceVersion").as_string()) + ")";
}

// Every version is the receipt's Pod with exactly the settings the receipt read back, one
// container `box`, never restarted, and no init container.
void check_settings(const json::value& receipt, const std::vector<PodEvent>& history, std::vector<std::string>& found)
{
    const auto& effective = receipt.at("observed").at("effective_policy").as_object();
    const auto [name, uid] = pod_of(receipt);
    for (const auto& event : history) {
        const auto& pod = event.pod;
        const auto& metadata = pod.at("metadata");
        const auto version = version_of(event);
        const auto expect = [&found, &version](bool holds, const std::string& finding) {
            if (!holds) found.push_back(version + finding);
        };
        expect(metadata.at("uid") == json::value(uid) && metadata.at("name") == json::value(name),
               " is another Pod than container_id " + std::string(receipt.at("container_id").as_string()));
        expect(pod.at("spec") == effective.at("spec"), ": the spec is not effective_policy.spec");
        expect(metadata.at("labels") == effective.at("metadata").at("labels"),
               ": the labels are not effective_policy.metadata.labels");
        expect(metadata.at("annotations") == effective.at("metadata").at("annotations"),
               ": the annotations are not effective_policy.metadata.annotations");
        expect(!pod.at("status").as_object().contains("initContainerStatuses"), ": init containers");
        if (const auto* status = box_status(pod))
            expect(status->at("name") == "box" && status->at("restartCount") == 0,
                   ": the container is not box, or it restarted");
    }
}

// Every version marked for deletion was deleted with grace 0.
void check_deleted_at_once(const std::vector<PodEvent>& history, std::vector<std::string>& found)
{
    for (const auto& event : history) {
        const auto& metadata = event.pod.at("metadata").as_object();
        if (metadata.contains("deletionTimestamp") && metadata.at("deletionGracePeriodSeconds") != 0)
            found.push_back(version_of(event) + ": deleted with a grace period");
    }
}

// A test failure for each contradiction, with the watch's events and the receipt.
void fail_each(const JsonRun& run, const std::vector<PodEvent>& history, const std::vector<std::string>& contradictions)
{
    std::string types;
    for (const auto& event : history) types += event.type + " ";
    INFO("the watch's events of the Pod: " << types);
    INFO("the receipt: " << json::serialize(run.receipt));
    for (const auto& contradiction : contradictions) FAIL_CHECK(contradiction);
}

}  // namespace

PodWatch::PodWatch() : m_file(runtime_home().string() + "-pod-watch-" + random_id_128() + ".jsonl")
{
    auto list = admin_kubectl();
    list.insert(list.end(), {"get", "--raw", pods_path()});
    const auto listed = run_process(list);
    REQUIRE(listed.has_value());
    REQUIRE(listed->exit_code == 0);
    const auto version = json::parse(listed->output).at("metadata").at("resourceVersion");
    auto watch = admin_kubectl();
    watch.insert(watch.end(), {"get", "--raw", pods_path() + "?watch=1&resourceVersion=" + std::string(version.as_string())});
    auto started = spawn_detached(watch, m_file);
    REQUIRE(started.has_value());
    m_pid = *started;
}

PodWatch::~PodWatch()
{
    send_signal(m_pid, k_signal_kill);
    std::error_code ignored;
    std::filesystem::remove(m_file, ignored);
}

std::vector<PodEvent> PodWatch::events() const
{
    std::vector<PodEvent> events;
    const auto text = read_file_capped(m_file, 64 << 20);
    REQUIRE(text.has_value());
    std::istringstream lines(*text);
    // Whole lines only: the last one may still be being written.
    for (std::string line; std::getline(lines, line) && !lines.eof();) {
        INFO("the watch wrote: " << line);
        boost::system::error_code ec;
        auto event = json::parse(line, ec);
        REQUIRE_FALSE(ec);
        const std::string type(event.at("type").as_string());
        REQUIRE((type == "ADDED" || type == "MODIFIED" || type == "DELETED"));
        auto& pod = event.at("object").as_object();
        REQUIRE(pod.at("kind") == "Pod");
        events.push_back({type, std::move(pod)});
    }
    return events;
}

std::vector<PodEvent> PodWatch::history(const std::string& uid, std::chrono::seconds limit) const
{
    std::vector<PodEvent> history;
    within(limit, [&] {
        history.clear();
        for (auto& event : events())
            if (event.pod.at("metadata").at("uid") == json::value(uid)) history.push_back(std::move(event));
        return !history.empty() && history.back().type == "DELETED";
    });
    return history;
}

std::vector<std::vector<PodEvent>> PodWatch::run_histories(const std::string& run_id, std::size_t pods,
                                                           std::chrono::seconds limit) const
{
    std::vector<std::vector<PodEvent>> histories;
    within(limit, [&] {
        histories.clear();
        std::map<std::string, std::size_t> index_of_uid;
        for (auto& event : events()) {
            const auto* labels = event.pod.at("metadata").as_object().if_contains("labels");
            if (labels == nullptr || !labels->is_object()) continue;
            const auto* run = labels->as_object().if_contains("pybox.run");
            if (run == nullptr || *run != json::value(run_id)) continue;
            const auto [at, first] =
                index_of_uid.try_emplace(std::string(event.pod.at("metadata").at("uid").as_string()), histories.size());
            if (first) histories.emplace_back();
            histories.at(at->second).push_back(std::move(event));
        }
        return histories.size() >= pods && std::all_of(histories.begin(), histories.end(), [](const auto& history) {
                   return history.back().type == "DELETED";
               });
    });
    return histories;
}

std::vector<std::string> pod_history_contradictions(const json::value& receipt, const std::vector<PodEvent>& history)
{
    std::vector<std::string> found;
    const auto expect = [&found](bool holds, const std::string& finding) {
        if (!holds) found.push_back(finding);
    };
    const std::string container_id(receipt.at("container_id").as_string());
    expect(!history.empty(), "the watch saw no Pod with the UID of container_id " + container_id);
    if (history.empty()) return found;
    expect(history.front().type == "ADDED", "the watch's first event of the Pod is " + history.front().type);

    // Every version is this Pod with exactly the settings the receipt read back.
    check_settings(receipt, history, found);
    const auto& effective = receipt.at("observed").at("effective_policy").as_object();
    expect(effective.at("node_pids_limit").at("node") == history.front().pod.at("spec").at("nodeName"),
           "effective_policy.node_pids_limit.node is not the Pod's node");

    // The container's end as the Pod's status gave it, and the receipt's copy of it.
    const json::object* end = nullptr;
    for (const auto& event : history) {
        const auto* terminated = terminated_state(event.pod);
        if (terminated == nullptr) continue;
        if (end != nullptr && *terminated != *end)
            found.push_back("the container ended twice: " + json::serialize(*terminated) + " after " + json::serialize(*end));
        end = terminated;
    }
    expect(end != nullptr, "no version of the Pod shows its container terminated");
    if (end == nullptr) return found;
    const auto& engine_state = receipt.at("observed").at("engine_state");
    expect(engine_state.at("state").at("terminated") == json::value(*end),
           "engine_state.state.terminated is not the Pod's: " + json::serialize(*end));
    if (const auto* last_status = box_status(history.back().pod)) {
        expect(engine_state.at("imageID") == last_status->at("imageID"), "engine_state.imageID is not the Pod's");
        expect(effective.at("image_id") == last_status->at("imageID"), "effective_policy.image_id is not the Pod's imageID");
    }
    const auto& termination = receipt.at("observed").at("termination");
    expect(termination.at("engine_lifetime_s").to_number<double>() ==
               static_cast<double>(rfc3339_seconds(end->at("finishedAt")) - rfc3339_seconds(end->at("startedAt"))),
           "engine_lifetime_s is not finishedAt - startedAt");

    // Nothing in the Pod's record contradicts how the receipt says the run ended.
    expect(termination.at("exit_code") == end->at("exitCode"),
           "the receipt's exit code is not the Pod's " + json::serialize(end->at("exitCode")));
    const std::string mechanism(termination.at("mechanism").as_string());
    // OOMKilled says a process of the container was killed for memory; with 137 the box may have
    // ended by it, with another exit code the program ended by itself (docs/hostile.md case 43).
    const bool oom_killed = end->at("reason") == "OOMKilled";
    const bool exit_137 = end->at("exitCode") == 137;
    expect(mechanism != "OUT_OF_MEMORY" || (oom_killed && exit_137),
           "OUT_OF_MEMORY without OOMKilled and exit code 137 in the Pod's status");
    expect(!oom_killed || !exit_137 || mechanism == "OUT_OF_MEMORY" || mechanism == "CAUSE_NOT_ESTABLISHED",
           "the Pod's status says OOMKilled with exit code 137, the receipt " + mechanism);
    bool oom_kill_recorded = false;
    for (const auto& explanation : receipt.at("explanations").as_array())
        if (explanation.at("code") == "OUT_OF_MEMORY" || explanation.at("code") == "OOM_KILL_IN_BOX")
            oom_kill_recorded = true;
    expect(oom_killed == oom_kill_recorded,
           std::string("the Pod's status says ") + (oom_killed ? "" : "no ") + "OOMKilled, the receipt's explanations " +
               (oom_kill_recorded ? "an" : "no") + " OOM kill");
    std::set<std::string> nonces;
    collect_kill_nonces(receipt, nonces);
    const auto* message = end->if_contains("message");
    bool kill_recorded = false;
    for (const auto& nonce : nonces)
        if (message != nullptr && *message == json::value("pybox-kill " + nonce + "\n")) kill_recorded = true;
    const bool stopped_by_pybox = mechanism == "DEADLINE_KILL" || mechanism == "STOPPED_ON_DISCONNECT";
    expect(stopped_by_pybox == (kill_recorded && end->at("exitCode") == 137 && !oom_killed),
           "the receipt says " + mechanism + ", the Pod's end " + json::serialize(*end));
    expect(termination.at("deadline_kill_sent") == true || nonces.empty(), "a kill nonce without a kill sent");

    // The deletion the receipt reports, with grace 0, after the end it reports.
    const bool removed = receipt.at("cleanup").at("removed") == true;
    expect((history.back().type == "DELETED") == removed,
           "the watch's last event is " + history.back().type + ", cleanup.removed " + (removed ? "true" : "false"));
    check_deleted_at_once(history, found);
    for (const auto& event : history)
        if (event.pod.at("metadata").as_object().contains("deletionTimestamp"))
            expect(terminated_state(event.pod) != nullptr, "deleted before its container's end was in its status");
    return found;
}

std::vector<std::string> unstarted_pod_contradictions(const json::value& receipt, const std::vector<PodEvent>& history)
{
    std::vector<std::string> found;
    const auto expect = [&found](bool holds, const std::string& finding) {
        if (!holds) found.push_back(finding);
    };
    expect(!history.empty(), "the watch saw no version of the Pod");
    if (history.empty()) return found;
    expect(history.front().type == "ADDED", "the watch's first event of the Pod is " + history.front().type);
    expect(history.back().type == "DELETED", "the watch's last event of the Pod is " + history.back().type);
    const auto& run_id = receipt.at("identity").at("run_id");
    for (const auto& event : history) {
        expect(event.pod.at("metadata").at("labels").at("pybox.run") == run_id,
               version_of(event) + ": not labelled with the receipt's run");
        expect(!container_ran(event.pod), version_of(event) + ": its container ran");
    }
    check_deleted_at_once(history, found);

    const auto& uid = history.front().pod.at("metadata").at("uid");
    if (pod_of(receipt).second == uid.as_string()) {
        check_settings(receipt, history, found);
        expect(receipt.at("cleanup").at("removed") == true, "cleanup.removed is not true");
        return found;
    }
    // Not the receipt's Pod: the first of a box made again, the kubelet's words its reason.
    const json::object* remade = nullptr;
    for (const auto& explanation : receipt.at("explanations").as_array())
        if (explanation.at("code") == "BOX_REMADE") remade = &explanation.as_object();
    expect(remade != nullptr, "the Pod is not container_id and the receipt names no box made again");
    if (remade == nullptr) return found;
    const auto& first = remade->at("evidence").at("first_container_id");
    const std::string first_id(first.as_string());
    expect(first_id.substr(first_id.find('/') + 1) == uid.as_string(),
           "BOX_REMADE names another first Pod: " + first_id);
    const auto& kubelet = receipt.at("observed").at("effective_policy").at("seccomp_fallback").at("kubelet");
    bool said = false;
    for (const auto& event : history) {
        const auto* status = box_status(event.pod);
        if (status == nullptr) continue;
        const auto* waiting = status->at("state").as_object().if_contains("waiting");
        if (waiting != nullptr && waiting->as_object().contains("message") &&
            kubelet == json::value(std::string(waiting->at("reason").as_string()) + ": " +
                                   std::string(waiting->at("message").as_string())))
            said = true;
    }
    expect(said, "no version of the first Pod's container waits with the kubelet's words " + json::serialize(kubelet));
    return found;
}

std::vector<std::string> lost_pod_contradictions(const json::value& receipt, const std::vector<PodEvent>& until_lost,
                                                 const std::vector<PodEvent>& after_return)
{
    std::vector<std::string> found;
    const auto expect = [&found](bool holds, const std::string& finding) {
        if (!holds) found.push_back(finding);
    };
    expect(!until_lost.empty() && until_lost.front().type == "ADDED",
           "the record up to the loss does not begin with the Pod's ADDED");
    expect(!after_return.empty() && after_return.back().type == "DELETED",
           "the record after the apiserver's return does not end with the Pod's deletion");
    check_settings(receipt, until_lost, found);
    check_settings(receipt, after_return, found);
    for (const auto& event : until_lost) {
        expect(terminated_state(event.pod) == nullptr,
               version_of(event) + ": the container ended before the apiserver went away, and the receipt saw no end");
        expect(event.type != "DELETED" && !event.pod.at("metadata").as_object().contains("deletionTimestamp"),
               version_of(event) + ": deleted before the apiserver went away, and the receipt says unconfirmed");
    }
    expect(receipt.at("cleanup").at("removed") == false, "cleanup.removed is not false");
    check_deleted_at_once(after_return, found);
    return found;
}

void check_receipt_against_pod_history(const JsonRun& run, const std::vector<PodEvent>& history)
{
    fail_each(run, history, pod_history_contradictions(run.receipt, history));
}

void check_unstarted_pod(const JsonRun& run, const std::vector<PodEvent>& history)
{
    fail_each(run, history, unstarted_pod_contradictions(run.receipt, history));
}

}  // namespace pybox::test
