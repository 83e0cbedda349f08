#include "daemon/watcher/watch_schedule.hpp"

#include "common/limits.hpp"

#include <catch2/catch.hpp>

using namespace pybox;
using namespace std::chrono_literals;
using watcher::watch_schedule;

namespace {

// When the last of the samples is taken, from the watcher's start.
std::chrono::milliseconds last_sample_at(const watcher::WatchSchedule& s)
{
    return s.fast_gap * (s.fast_samples - 1) + s.slow_gap * (s.max_samples - s.fast_samples);
}

}  // namespace

TEST_CASE("A 2 s deadline gets 20 samples 50 ms apart, then 44 spread up to the box timer")
{
    const auto s = watch_schedule(2.0);
    CHECK(s.max_samples == 64);
    CHECK(s.fast_samples == 20);
    CHECK(s.fast_gap == 50ms);
    CHECK(s.slow_gap == 46ms);  // (3000 - 950) / 44, rounded down
    CHECK(s.max_run == 6000ms);
    CHECK(last_sample_at(s) == 2974ms);
}

TEST_CASE("A 30 s deadline spreads its slow samples 682 ms apart and stops 4 s after the deadline")
{
    const auto s = watch_schedule(30.0);
    CHECK(s.fast_samples == 20);
    CHECK(s.slow_gap == 682ms);  // (31000 - 950) / 44
    CHECK(s.max_run == 34000ms);
    CHECK(last_sample_at(s) <= 31000ms);
}

TEST_CASE("A 0.1 s deadline never samples closer than the minimum gap and runs at least 6 s")
{
    const auto s = watch_schedule(0.1);
    CHECK(s.slow_gap == limits::k_watch_min_gap);
    CHECK(s.max_run == limits::k_watch_min_run);
}

TEST_CASE("The last sample falls before the box timer for every deadline where the gap allows")
{
    for (const double deadline : {0.5, 1.0, 2.0, 5.0, 10.0, 29.9, 30.0}) {
        const auto s = watch_schedule(deadline);
        CHECK(last_sample_at(s) <= std::chrono::milliseconds(static_cast<long long>(deadline * 1000)) + 1000ms);
        CHECK(last_sample_at(s) < s.max_run);
    }
}

TEST_CASE("The final phase polls every 10 ms for at most one second")
{
    const auto s = watch_schedule(2.0);
    CHECK(s.final_gap == 10ms);
    CHECK(s.final_polls == 100);
}

TEST_CASE("A deadline outside the request range is clamped to it")
{
    CHECK(watch_schedule(100.0).max_run == watch_schedule(30.0).max_run);
    CHECK(watch_schedule(0.0).slow_gap == watch_schedule(0.1).slow_gap);
}
