#include "daemon/watcher/process_end_log.hpp"

#include <variant>

namespace pybox::watcher {

namespace {

std::int64_t event_time(const ProcEvent& event)
{
    if (const auto* fork = std::get_if<ProcFork>(&event)) return fork->mono_ns;
    if (const auto* exit = std::get_if<ProcExit>(&event)) return exit->mono_ns;
    return 0;
}

}  // namespace

void ProcessEndLog::apply(const ProcEvent& event, std::int64_t first_pid, Followed& followed) const
{
    if (event_time(event) < followed.since_mono_ns) return;
    auto& ends = followed.ends;
    if (const auto* fork = std::get_if<ProcFork>(&event)) {
        if (fork->parent == first_pid && !ends.program_pid) ends.program_pid = fork->child;
    } else if (const auto* exit = std::get_if<ProcExit>(&event)) {
        if (exit->pid == first_pid && !ends.first) ends.first = *exit;
        if (ends.program_pid && exit->pid == *ends.program_pid && !ends.program) ends.program = *exit;
    }
}

void ProcessEndLog::record(const ProcEvent& event)
{
    if (std::holds_alternative<ProcAck>(event)) return;
    for (auto& [pid, followed] : m_followed) apply(event, pid, followed);
    m_recent.push_back(event);
    if (m_recent.size() > k_recent_events) m_recent.pop_front();
}

void ProcessEndLog::lost_events()
{
    for (auto& entry : m_followed) entry.second.ends.events_lost = true;
}

void ProcessEndLog::follow(std::int64_t first_pid, std::int64_t since_mono_ns)
{
    Followed followed{since_mono_ns, {}};
    for (const auto& event : m_recent) apply(event, first_pid, followed);
    m_followed[first_pid] = std::move(followed);
}

FollowedEnds ProcessEndLog::take(std::int64_t first_pid)
{
    if (m_catch_up) m_catch_up();
    const auto found = m_followed.find(first_pid);
    if (found == m_followed.end()) return {};
    FollowedEnds ends = std::move(found->second.ends);
    m_followed.erase(found);
    if (m_followed.empty() && m_idle) m_idle();
    return ends;
}

}  // namespace pybox::watcher
