#include "daemon/engine/docker_facts.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"

#include <boost/json/object.hpp>

#include <algorithm>
#include <string_view>

namespace pybox::engine {

namespace json = boost::json;

namespace {

std::string string_field(const json::object& object, std::string_view key)
{
    if (const auto* value = object.if_contains(key); value != nullptr && value->is_string())
        return std::string(value->get_string());
    return {};
}

std::optional<std::int64_t> int_field(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    if (value == nullptr || !value->is_int64()) return std::nullopt;
    return value->get_int64();
}

bool bool_field(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    return value != nullptr && value->is_bool() && value->get_bool();
}

std::optional<std::int64_t> time_field(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    if (value == nullptr || !value->is_string()) return std::nullopt;
    return parse_rfc3339_ns(value->get_string());
}

}  // namespace

std::string ListedBox::label(std::string_view key) const
{
    const auto found = std::find_if(labels.begin(), labels.end(), [&](const auto& label) { return label.first == key; });
    return found == labels.end() ? std::string() : found->second;
}

BoxState docker_box_state(const json::value& inspected)
{
    BoxState state;
    const auto* object = inspected.if_object();
    const auto* raw = object != nullptr ? object->if_contains("State") : nullptr;
    if (raw == nullptr) return state;
    state.raw = *raw;
    const auto* fields = raw->if_object();
    if (fields == nullptr) return state;
    state.reported = true;
    state.status = string_field(*fields, "Status");
    state.running = bool_field(*fields, "Running");
    state.exit_code = int_field(*fields, "ExitCode");
    state.oom_killed = bool_field(*fields, "OOMKilled");
    if (const auto pid = int_field(*fields, "Pid"); pid && *pid > 0) state.first_pid = pid;
    state.started_at_ns = time_field(*fields, "StartedAt");
    state.finished_at_ns = time_field(*fields, "FinishedAt");
    const json::value exit_code = !state.running && state.exit_code ? json::value(*state.exit_code) : json::value(nullptr);
    const auto* status = fields->if_contains("Status");
    state.summary = {{"Status", status != nullptr ? *status : json::value(nullptr)},
                     {"ExitCode", exit_code},
                     {"OOMKilled", state.oom_killed}};
    state.exit_code_record = {{"ExitCode", exit_code}};
    return state;
}

BoxInspection docker_inspection(json::value inspected)
{
    BoxInspection inspection;
    inspection.state = docker_box_state(inspected);
    inspection.raw = std::move(inspected);
    return inspection;
}

EngineInfo docker_engine_info(json::value raw)
{
    EngineInfo info;
    if (const auto* object = raw.if_object()) {
        info.os_type = string_field(*object, "OSType");
        info.data_root = string_field(*object, "DockerRootDir");
        info.cgroup_driver = string_field(*object, "CgroupDriver");
        info.cgroup_version = string_field(*object, "CgroupVersion");
        if (const auto* options = object->if_contains("SecurityOptions"); options != nullptr && options->is_array())
            for (const auto& option : options->get_array())
                if (option.is_string() && std::string_view(option.get_string()).starts_with("name=seccomp"))
                    info.seccomp = true;
        if (const auto* runtimes = object->if_contains("Runtimes"); runtimes != nullptr && runtimes->is_object())
            for (const auto& runtime : runtimes->get_object()) info.runtimes.emplace_back(runtime.key());
        if (const auto* time = object->if_contains("SystemTime"); time != nullptr && time->is_string())
            info.system_time = std::string(time->get_string());
    }
    info.raw = std::move(raw);
    return info;
}

std::vector<ListedBox> docker_listed_boxes(const json::array& listed)
{
    std::vector<ListedBox> boxes;
    for (const auto& item : listed) {
        const auto* object = item.if_object();
        if (object == nullptr) continue;
        ListedBox box;
        box.id = string_field(*object, "Id");
        if (box.id.empty()) continue;
        if (const auto* labels = object->if_contains("Labels"); labels != nullptr && labels->is_object())
            for (const auto& [key, value] : labels->get_object())
                if (value.is_string()) box.labels.emplace_back(key, value.get_string());
        boxes.push_back(std::move(box));
    }
    return boxes;
}

Expected<CgroupFacts> cgroup_facts_from_info(const engine::EngineInfo& info)
{
    if (info.cgroup_version.empty() || info.cgroup_driver.empty())
        return make_error(api_error::k_cgroup_unknown, "the engine's /info names no CgroupVersion or CgroupDriver");
    CgroupFacts facts;
    if (info.cgroup_version == "1") facts.version = 1;
    else if (info.cgroup_version == "2") facts.version = 2;
    else
        return make_error(api_error::k_cgroup_unknown, "the engine's cgroup version \"" + info.cgroup_version + "\" is not 1 or 2");
    facts.driver = info.cgroup_driver;
    return facts;
}

ImageFacts docker_image_facts(json::value inspected)
{
    ImageFacts facts;
    if (const auto* object = inspected.if_object()) facts.id = string_field(*object, "Id");
    facts.raw = std::move(inspected);
    return facts;
}

}  // namespace pybox::engine
