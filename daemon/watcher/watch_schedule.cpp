#include "daemon/watcher/watch_schedule.hpp"

#include "common/limits.hpp"

#include <algorithm>
#include <cmath>

namespace pybox::watcher {

using std::chrono::milliseconds;

WatchSchedule watch_schedule(double deadline_s)
{
    const milliseconds deadline{
        std::llround(std::clamp(deadline_s, limits::k_min_timeout_s, limits::k_max_timeout_s) * 1000)};
    const milliseconds box_timer = deadline + milliseconds{std::llround(limits::k_box_timer_margin_s * 1000)};

    WatchSchedule schedule;
    schedule.fast_gap = limits::k_watch_fast_gap;
    schedule.fast_samples = static_cast<int>(limits::k_watch_fast_phase / limits::k_watch_fast_gap);
    schedule.max_samples = limits::k_watch_samples;
    const milliseconds last_fast = schedule.fast_gap * (schedule.fast_samples - 1);
    schedule.slow_gap =
        std::max(limits::k_watch_min_gap, (box_timer - last_fast) / (schedule.max_samples - schedule.fast_samples));
    schedule.max_run = std::max(limits::k_watch_min_run, deadline + limits::k_watch_run_margin) / 10 * 10;
    schedule.final_gap = limits::k_watch_min_gap;
    schedule.final_polls = static_cast<int>(limits::k_watch_final_wait / limits::k_watch_min_gap);
    return schedule;
}

}  // namespace pybox::watcher
