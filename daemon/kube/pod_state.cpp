#include "daemon/kube/pod_state.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/kube/pod_spec.hpp"
#include "proto/box_policy.hpp"

#include <boost/json/object.hpp>

#include <algorithm>
#include <limits>

namespace pybox::kube {

namespace json = boost::json;

namespace {

constexpr std::size_t k_pod_uid_bytes = 36;

const json::object* object_field(const json::object* object, std::string_view key)
{
    if (object == nullptr) return nullptr;
    const auto* value = object->if_contains(key);
    return value != nullptr ? value->if_object() : nullptr;
}

std::string string_field(const json::object* object, std::string_view key)
{
    if (object == nullptr) return {};
    if (const auto* value = object->if_contains(key); value != nullptr && value->is_string())
        return std::string(value->get_string());
    return {};
}

// A field that may be absent (or null) but, when present, must have the expected type.
bool absent_or(const json::object& object, std::string_view key, json::kind kind)
{
    const auto* value = object.if_contains(key);
    return value == nullptr || value->is_null() || value->kind() == kind;
}

// The box container's entry of status.containerStatuses; nullptr when there is none yet.
// `malformed` is set when the status or the list has an unexpected type.
const json::value* box_status(const json::value& pod, bool& malformed)
{
    malformed = true;
    const auto* object = pod.if_object();
    if (object == nullptr || !absent_or(*object, "status", json::kind::object)) return nullptr;
    const auto* status = object_field(object, "status");
    if (status != nullptr && !absent_or(*status, "containerStatuses", json::kind::array)) return nullptr;
    malformed = false;
    if (status == nullptr) return nullptr;
    const auto* statuses = status->if_contains("containerStatuses");
    if (statuses == nullptr || statuses->is_null()) return nullptr;
    for (const auto& item : statuses->get_array()) {
        const auto* entry = item.if_object();
        if (entry == nullptr) {
            malformed = true;
            return nullptr;
        }
        if (const auto* name = entry->if_contains("name"); name != nullptr && name->is_string() &&
                                                            name->get_string() == k_box_container)
            return &item;
    }
    return nullptr;
}

std::optional<std::int64_t> time_field(const json::object& state, std::string_view key)
{
    const auto* value = state.if_contains(key);
    if (value == nullptr || !value->is_string()) return std::nullopt;
    return parse_rfc3339_ns(value->get_string());
}

bool is_int32(const json::value& value)
{
    return value.is_int64() && value.get_int64() >= std::numeric_limits<std::int32_t>::min() &&
           value.get_int64() <= std::numeric_limits<std::int32_t>::max();
}

// Whether the terminated state's message is the fed box's record of the kill that carried
// `kill_nonce`, read into `box`; false when the message is malformed.
bool read_kill_acknowledgement(const json::object& terminated, std::string_view kill_nonce, engine::BoxState& box)
{
    if (!absent_or(terminated, "message", json::kind::string)) return false;
    const std::string message = string_field(&terminated, "message");
    if (message.size() > k_max_termination_message_bytes) return false;
    box.kill_acknowledged = !kill_nonce.empty() && message == proto::fed_kill_record(kill_nonce);
    box.kill_acknowledgement_record = {
        {"terminationMessage", terminated.contains("message") ? terminated.at("message") : json::value(nullptr)},
        {"kill_nonce", kill_nonce.empty() ? json::value(nullptr) : json::value(kill_nonce)}};
    return true;
}

// The state object's one entry ("waiting", "running" or "terminated") read into `box`; false
// when the state is malformed.
bool read_state(const json::object& container, std::string_view kill_nonce, engine::BoxState& box)
{
    if (!absent_or(container, "state", json::kind::object)) return false;
    const auto* state = object_field(&container, "state");
    for (std::string_view key : {"waiting", "running", "terminated"})
        if (state != nullptr && !absent_or(*state, key, json::kind::object)) return false;
    const auto* terminated = object_field(state, "terminated");
    const auto* running = object_field(state, "running");
    box.summary = {{"state", nullptr}, {"exitCode", nullptr}, {"reason", nullptr}};
    if (terminated != nullptr) {
        const auto* exit_code = terminated->if_contains("exitCode");
        if (exit_code == nullptr || !is_int32(*exit_code) || !absent_or(*terminated, "reason", json::kind::string) ||
            !read_kill_acknowledgement(*terminated, kill_nonce, box))
            return false;
        box.status = "exited";
        box.exit_code = exit_code->get_int64();
        const std::string reason = string_field(terminated, "reason");
        box.oom_killed = reason == "OOMKilled";
        box.started_at_ns = time_field(*terminated, "startedAt");
        box.finished_at_ns = time_field(*terminated, "finishedAt");
        box.summary = {{"state", "terminated"},
                       {"exitCode", *box.exit_code},
                       {"reason", reason.empty() ? json::value(nullptr) : json::value(reason)}};
    } else if (running != nullptr) {
        box.status = "running";
        box.running = true;
        box.started_at_ns = time_field(*running, "startedAt");
        box.summary["state"] = "running";
    } else {
        box.status = "pending";
        if (const auto* waiting = object_field(state, "waiting")) {
            box.summary["state"] = "waiting";
            if (const std::string reason = string_field(waiting, "reason"); !reason.empty()) box.summary["reason"] = reason;
        }
    }
    box.exit_code_record = {{"exitCode", box.summary["exitCode"]}};
    return true;
}

bool is_uid(std::string_view uid)
{
    if (uid.size() != k_pod_uid_bytes) return false;
    for (std::size_t i = 0; i < uid.size(); ++i) {
        const bool dash_place = i == 8 || i == 13 || i == 18 || i == 23;
        const char c = uid[i];
        if (dash_place ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

Error protocol_error(std::string what)
{
    return make_error(api_error::k_engine_protocol, "The apiserver's list of Pods " + std::move(what) + ".");
}

Expected<engine::ListedBox> listed_pod(const json::value& item, std::size_t index)
{
    const std::string where = "has an item " + std::to_string(index) + " ";
    const auto* metadata = object_field(item.if_object(), "metadata");
    if (metadata == nullptr) return protocol_error(where + "without metadata");
    const auto* name = metadata->if_contains("name");
    const auto* uid = metadata->if_contains("uid");
    if (name == nullptr || !name->is_string() || uid == nullptr || !uid->is_string())
        return protocol_error(where + "without a name and a UID");
    const auto ref = parse_pod_ref(std::string(name->get_string()) + "/" + std::string(uid->get_string()));
    if (!ref) return protocol_error(where + "whose name or UID is not valid");
    engine::ListedBox box;
    box.id = pod_ref_id(*ref);
    if (!absent_or(*metadata, "labels", json::kind::object)) return protocol_error(where + "whose labels are not an object");
    if (const auto* labels = object_field(metadata, "labels"))
        for (const auto& [key, value] : *labels) {
            if (!value.is_string()) return protocol_error(where + "with a label that is not a string");
            box.labels.emplace_back(key, value.get_string());
        }
    return box;
}

}  // namespace

engine::BoxState box_container_state(const json::value& pod, std::string_view kill_nonce)
{
    engine::BoxState state;
    bool malformed = false;
    const json::value* container = box_status(pod, malformed);
    if (malformed) return state;
    if (container == nullptr) {
        state.reported = true;
        state.status = "pending";
        state.summary = {{"state", nullptr}, {"exitCode", nullptr}, {"reason", nullptr}};
        state.exit_code_record = {{"exitCode", nullptr}};
        return state;
    }
    engine::BoxState read;
    read.raw = *container;
    if (!read_state(container->get_object(), kill_nonce, read)) {
        state.raw = *container;
        return state;
    }
    read.reported = true;
    return read;
}

engine::BoxInspection inspect_pod(json::value pod, std::string_view kill_nonce)
{
    engine::BoxInspection inspection;
    inspection.state = box_container_state(pod, kill_nonce);
    inspection.raw = std::move(pod);
    return inspection;
}

PodFacts pod_facts(const json::value& pod)
{
    PodFacts facts;
    const auto* object = pod.if_object();
    const auto* status = object_field(object, "status");
    facts.phase = string_field(status, "phase");
    facts.reason = string_field(status, "reason");
    facts.message = string_field(status, "message");
    facts.node_name = string_field(object_field(object, "spec"), "nodeName");
    facts.name = string_field(object_field(object, "metadata"), "name");
    facts.uid = string_field(object_field(object, "metadata"), "uid");
    facts.resource_version = string_field(object_field(object, "metadata"), "resourceVersion");
    bool malformed = false;
    if (const json::value* container = box_status(pod, malformed)) {
        const auto* fields = container->if_object();
        facts.image_id = string_field(fields, "imageID");
        const auto* state = object_field(fields, "state");
        const auto* waiting = object_field(state, "waiting");
        facts.box_ended = object_field(state, "terminated") != nullptr;
        facts.waiting_reason = string_field(waiting, "reason");
        facts.waiting_message = string_field(waiting, "message");
    }
    return facts;
}

bool shows_end(const json::value& pod)
{
    const auto state = box_container_state(pod);
    const auto phase = pod_facts(pod).phase;
    return (state.reported && !state.running && state.exit_code) || phase == "Failed" || phase == "Succeeded";
}

Expected<std::vector<engine::ListedBox>> listed_pods(const json::value& list)
{
    const auto* object = list.if_object();
    if (object == nullptr) return protocol_error("is not an object");
    if (const auto* kind = object->if_contains("kind"); kind == nullptr || *kind != "PodList")
        return protocol_error("is not a PodList");
    const auto* items = object->if_contains("items");
    if (items == nullptr || !(items->is_array() || items->is_null())) return protocol_error("has no items");
    std::vector<engine::ListedBox> boxes;
    if (items->is_null()) return boxes;
    for (std::size_t i = 0; i < items->get_array().size(); ++i) {
        auto box = listed_pod(items->get_array()[i], i);
        if (!box) return box.error();
        boxes.push_back(std::move(*box));
    }
    return boxes;
}

std::optional<PodRef> parse_pod_ref(std::string_view id)
{
    const auto slash = id.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const std::string_view name = id.substr(0, slash);
    const std::string_view uid = id.substr(slash + 1);
    if (!engine::is_dns_subdomain(name) || !is_uid(uid)) return std::nullopt;
    return PodRef{std::string(name), std::string(uid)};
}

std::string pod_ref_id(const PodRef& ref) { return ref.name + "/" + ref.uid; }

}  // namespace pybox::kube
