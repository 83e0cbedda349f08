// The ends of a box's first process and of its interpreter as this host's kernel records them:
// the wait status (an exit with a code, or a death by a signal) and the time on the monotonic
// clock, taken from the kernel's proc connector. The receipt's account of how a program ended
// rests on these where the engine's report cannot tell (the engine's ExitCode 137 is both a
// death by SIGKILL and `sys.exit(137)`, and its FinishedAt trails the kernel's exit by up to
// tens of milliseconds).
//
// ProcessEndLog is the pure part: fed the kernel's events, it keeps the ends of the processes it
// is asked to follow (a box's first process, known from the engine's State.Pid once the box has
// started, and that process's first child, the interpreter), and briefly the most recent forks
// and exits, so that a process that forked or ended before it was followed is still found.
// Everything it holds is bounded: k_recent_events of each kind, and one entry per followed box.
// The socket that feeds it is process_end_watcher.hpp's.
#pragma once

#include "daemon/watcher/proc_events.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>

namespace pybox::watcher {

// What the kernel recorded of one box: its first process's end, its interpreter (the first
// process's first child) and that one's end. A missing part was not recorded while followed.
struct FollowedEnds {
    std::optional<ProcExit> first;
    std::optional<std::int64_t> program_pid;
    std::optional<ProcExit> program;
    bool events_lost = false;  // the kernel dropped events while this box was followed
};

class ProcessEndLog {
public:
    static constexpr std::size_t k_recent_events = 4096;

    void record(const ProcEvent& event);
    // Events were dropped (the socket's buffer overflowed).
    void lost_events();
    // From now on, keeps the ends of `first_pid` and its first child, counting only events at or
    // after `since_mono_ns` (the box's start: an earlier event is another process's that had the
    // same pid). Events of either already among the recent ones are taken at once.
    void follow(std::int64_t first_pid, std::int64_t since_mono_ns);
    // What was recorded of the box whose first process is `first_pid`; stops following it.
    // Nothing (all parts empty) for a box never followed. Reads what the kernel has queued first
    // (`catch_up`, set by whoever feeds the log), so an end already sent is not missed, and tells
    // that feeder when no box is followed any more (`idle`).
    FollowedEnds take(std::int64_t first_pid);
    void set_feeder(std::function<void()> catch_up, std::function<void()> idle)
    {
        m_catch_up = std::move(catch_up);
        m_idle = std::move(idle);
    }
    std::size_t followed_count() const { return m_followed.size(); }

private:
    struct Followed {
        std::int64_t since_mono_ns = 0;
        FollowedEnds ends;
    };
    void apply(const ProcEvent& event, std::int64_t first_pid, Followed& followed) const;

    std::deque<ProcEvent> m_recent;  // the last k_recent_events forks and exits, oldest first
    std::map<std::int64_t, Followed> m_followed;
    std::function<void()> m_catch_up;
    std::function<void()> m_idle;
};

}  // namespace pybox::watcher
