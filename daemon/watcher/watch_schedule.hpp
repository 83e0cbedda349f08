// When the kernel watcher samples, as a pure function of the run's deadline. The numbers come
// from common/limits.hpp (k_watch_*): limits::k_watch_samples samples in all, the first at
// once ("ready"), k_watch_fast_gap apart during the first k_watch_fast_phase, the rest spread
// evenly up to the box timer (deadline + limits::k_box_timer_margin_s) but never closer than
// k_watch_min_gap; the watcher stops by itself at deadline + k_watch_run_margin, and not before
// k_watch_min_run. After the exit it polls the run's cgroup every k_watch_min_gap for at most
// k_watch_final_wait.
#pragma once

#include <chrono>

namespace pybox::watcher {

struct WatchSchedule {
    std::chrono::milliseconds fast_gap{};
    int fast_samples = 0;  // samples 1..fast_samples are fast_gap apart
    std::chrono::milliseconds slow_gap{};
    int max_samples = 0;
    std::chrono::milliseconds max_run{};  // from the watcher's start; a multiple of 10 ms
    std::chrono::milliseconds final_gap{};
    int final_polls = 0;
};

// deadline_s is the run's deadline (clamped to the request range, 0.1-30 s).
WatchSchedule watch_schedule(double deadline_s);

}  // namespace pybox::watcher
