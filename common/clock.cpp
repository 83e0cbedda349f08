#include "common/clock.hpp"

#include <ctime>
#include <iomanip>
#include <sstream>

namespace pybox {

std::int64_t unix_seconds(WallClock::time_point at)
{
    return std::chrono::duration_cast<std::chrono::seconds>(at.time_since_epoch()).count();
}

std::string rfc3339_utc(WallClock::time_point at)
{
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
    const std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    std::ostringstream out;
    out << std::put_time(&utc, "%Y-%m-%dT%H:%M:%S") << '.' << std::setw(6) << std::setfill('0')
        << (micros % 1'000'000) << 'Z';
    return out.str();
}

}  // namespace pybox
