// The two clock domains a receipt names: the host's monotonic clock (durations) and the
// host's wall clock (absolute times, comparable with the engine's timestamps only roughly).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pybox {

using MonoClock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;

// Seconds between two monotonic instants, as a double.
inline double seconds_between(MonoClock::time_point from, MonoClock::time_point to)
{
    return std::chrono::duration<double>(to - from).count();
}

// Unix time in whole seconds.
std::int64_t unix_seconds(WallClock::time_point at);
// RFC 3339 UTC with microseconds, e.g. 2026-11-29T20:00:05.021506Z.
std::string rfc3339_utc(WallClock::time_point at);

}  // namespace pybox
