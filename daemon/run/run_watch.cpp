#include "daemon/run/run_watch.hpp"

#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "daemon/watcher/resource_summary.hpp"
#include "daemon/watcher/watch_output.hpp"
#include "daemon/watcher/watch_schedule.hpp"
#include "daemon/watcher/watch_script.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>

#include <chrono>
#include <utility>
#include <limits>

namespace pybox::daemon {

namespace {

watcher::CgroupVersion version_of(int version)
{
    return version == 2 ? watcher::CgroupVersion::v2 : watcher::CgroupVersion::v1;
}

// What a counter is known to be: its final value; else a sampled value above zero (a count
// seen is a fact, while a zero sample says nothing about what came after it); else nothing.
std::optional<std::int64_t> known_count(const json::object& resources, std::string_view metric)
{
    const auto* metrics = resources.if_contains("metrics");
    const auto* record = metrics && metrics->is_object() ? metrics->as_object().if_contains(metric) : nullptr;
    if (record == nullptr || !record->is_object()) return std::nullopt;
    const auto& values = record->as_object();
    if (const auto* final = values.if_contains("final"); final && final->is_int64()) return final->as_int64();
    if (const auto* max = values.if_contains("max"); max && max->is_int64() && max->as_int64() > 0) return max->as_int64();
    return std::nullopt;
}

}  // namespace

WatchSetup engine_watch_setup(bool watcher_in_config, watcher::CgroupHost* host, std::string script,
                              ProcessEnds process_ends, std::string_view unwatched)
{
    if (!watcher_in_config)
        return WatchSetup{nullptr, std::move(script), std::string(k_watcher_off_in_config),
                          ProcessEnds{nullptr, std::string(k_watcher_off_in_config)}};
    if (!unwatched.empty())
        return WatchSetup{nullptr, std::move(script), std::string(unwatched), ProcessEnds{nullptr, std::string(unwatched)}};
    return WatchSetup{host, std::move(script), std::string(k_watcher_off_in_config), std::move(process_ends)};
}

RunWatch::~RunWatch()
{
    // A run that ended before finish() (a failed start) stops following its box.
    if (m_followed_pid) m_process_ends.log->take(*m_followed_pid);
}

std::string RunWatch::process_ends_unread() const
{
    if (m_process_ends.log == nullptr) return m_process_ends.unread;
    return "the engine did not name the box's first process on its host while it ran";
}

void RunWatch::not_watched(std::string reason)
{
    if (!m_not_watched) m_not_watched = std::move(reason);
}

net::awaitable<std::string> RunWatch::prepare(Expected<CgroupFacts> facts, std::string installation_id,
                                              std::string run_id)
{
    if (m_host == nullptr) {
        not_watched(std::string(m_off_reason));
        co_return std::string();
    }
    if (!facts) {
        not_watched("the engine's cgroup version and driver are not known: " + facts.error().message);
        co_return std::string();
    }
    auto cgroup = run_cgroup_for(*facts, installation_id, run_id);
    if (!cgroup) {
        not_watched(cgroup.error().message);
        co_return std::string();
    }
    auto created = co_await m_host->create_run_parent(cgroup->version, cgroup->parent);
    if (!created) {
        not_watched("the run's parent cgroup could not be created: " + created.error().message);
        co_return std::string();
    }
    m_cgroup = std::move(*cgroup);
    co_return m_cgroup->parent;
}

void RunWatch::start(const engine::BoxEngine& engine, std::string_view box_id, double deadline_s)
{
    if (!m_cgroup) return;
    auto box_cgroup = engine.box_cgroup(m_cgroup->parent, box_id);
    if (!box_cgroup) {
        not_watched("the engine does not say where it placed the box's cgroup");
        return;
    }
    const watcher::WatchTarget target{version_of(m_cgroup->version), m_host->mount_root(), std::move(*box_cgroup),
                                      m_cgroup->parent};
    auto session = m_host->start_watch(watcher::watch_command(target, watcher::watch_schedule(deadline_s), m_script));
    if (!session) {
        not_watched("the kernel watcher could not be started: " + session.error().message);
        return;
    }
    m_session = std::move(*session);
}

void RunWatch::first_process(std::int64_t pid, std::int64_t started_mono_ns)
{
    if (pid <= 0 || pid > std::numeric_limits<int>::max()) return;
    if (m_process_ends.log != nullptr && !m_followed_pid) {
        m_process_ends.log->follow(pid, started_mono_ns);
        m_followed_pid = pid;
    }
    if (m_session) m_session->final_when_ended(static_cast<int>(pid));
}

void RunWatch::exit_observed()
{
    if (m_session) m_session->request_final();
}

net::awaitable<void> RunWatch::finish(std::optional<ResourceObservation> from_engine)
{
    if (m_followed_pid) m_ends = m_process_ends.log->take(*std::exchange(m_followed_pid, std::nullopt));
    std::optional<watcher::WatchOutput> output;
    if (m_session) {
        output = co_await m_session->finish(limits::k_watch_finish_timeout);
        m_session.reset();
    }
    // Everything that went wrong around the readings themselves.
    std::vector<std::string> errors;
    if (m_cgroup) {
        auto removed = co_await m_host->remove_run_parent(m_cgroup->parent);
        if (!removed)
            errors.push_back("the run's parent cgroup was not removed: " + removed.error().message);
    }
    const auto version = version_of(m_cgroup ? m_cgroup->version : 1);
    ResourceObservation summary;
    if (output) {
        if (output->truncated)
            errors.push_back("the watcher printed more than the " + std::to_string(limits::k_watch_max_output_bytes) +
                             " bytes kept");
        if (output->killed) errors.emplace_back("the watcher did not end in time and was killed");
        const double ready_within_s = std::chrono::duration<double>(limits::k_watch_ready_within).count();
        if (!output->first_sample_after_s || *output->first_sample_after_s > ready_within_s)
            errors.push_back("the watcher's first sample did not arrive within " + util::format_number(ready_within_s) +
                             " s of the box's start");
        summary = watcher::summarize_resources(watcher::parse_watch_output(output->text, version), version, errors);
        summary.resources["ready_after_s"] =
            output->first_sample_after_s ? json::value(*output->first_sample_after_s) : json::value(nullptr);
    } else if (from_engine) {
        summary = std::move(*from_engine);
    } else {
        not_watched("the program never started, so there was nothing to watch");
        summary = watcher::resources_not_watched(*m_not_watched);
        for (const auto& error : errors) summary.resources["errors"].as_array().emplace_back(error);
    }
    if (m_cgroup) {
        summary.resources["run_parent"] = m_cgroup->parent;
        summary.resources["host"] = m_host->describe();
        summary.resources["watcher_sha256"] = sha256_hex(m_script);
    }
    m_oom_kills = known_count(summary.resources, "memory.events.oom_kill");
    m_resources = std::move(summary.resources);
    m_unknown = std::move(summary.unknown);
}

}  // namespace pybox::daemon
