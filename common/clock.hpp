// The host's clocks a receipt names: the monotonic clock (durations) and the wall clock
// (absolute times; comparable with the engine's timestamps through a measured offset, see
// daemon/engine/engine_clock.hpp). Pure helpers.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox {

using MonoClock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;

// A monotonic instant as nanoseconds of CLOCK_MONOTONIC (steady_clock's clock on Linux), the
// clock of the kernel's own timestamps such as the proc connector's.
inline std::int64_t monotonic_ns(MonoClock::time_point instant)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(instant.time_since_epoch()).count();
}

// Seconds between two monotonic instants, as a double.
inline double seconds_between(MonoClock::time_point from, MonoClock::time_point to)
{
    return std::chrono::duration<double>(to - from).count();
}

// Unix time in whole seconds.
std::int64_t unix_seconds(WallClock::time_point at);
// Unix time in nanoseconds.
std::int64_t unix_nanoseconds(WallClock::time_point at);
// RFC 3339 UTC with microseconds, e.g. 2026-11-29T20:00:05.021506Z.
std::string rfc3339_utc(WallClock::time_point at);
// Nanoseconds since the epoch of an RFC 3339 timestamp with 0-9 fraction digits and `Z` or a
// `+hh:mm` / `-hh:mm` offset: the engine's StartedAt and FinishedAt, and GET /info's SystemTime
// (Go's RFC3339Nano, local time). nullopt when it does not parse, and for years before 1971
// (the engine's zero time, 0001-01-01T00:00:00Z, means "never").
std::optional<std::int64_t> parse_rfc3339_ns(std::string_view text);

}  // namespace pybox
