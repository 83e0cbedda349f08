#include "common/clock.hpp"

#include <charconv>
#include <ctime>
#include <iomanip>
#include <sstream>

namespace pybox {

std::int64_t unix_seconds(WallClock::time_point at)
{
    return std::chrono::duration_cast<std::chrono::seconds>(at.time_since_epoch()).count();
}

std::int64_t unix_nanoseconds(WallClock::time_point at)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
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

namespace {

bool parse_digits(std::string_view text, std::size_t at, std::size_t count, int& out)
{
    if (at + count > text.size()) return false;
    const char* first = text.data() + at;
    const auto [end, ec] = std::from_chars(first, first + count, out);
    return ec == std::errc() && end == first + count;
}

}  // namespace

std::optional<std::int64_t> parse_rfc3339_ns(std::string_view text)
{
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (text.size() < 20 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') ||
        text[13] != ':' || text[16] != ':' || !parse_digits(text, 0, 4, year) || !parse_digits(text, 5, 2, month) ||
        !parse_digits(text, 8, 2, day) || !parse_digits(text, 11, 2, hour) || !parse_digits(text, 14, 2, minute) ||
        !parse_digits(text, 17, 2, second))
        return std::nullopt;
    if (year < 1971 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return std::nullopt;
    std::size_t at = 19;
    std::int64_t fraction_ns = 0;
    if (text[at] == '.') {
        std::int64_t scale = 100'000'000;
        const std::size_t first = ++at;
        for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
            if (scale == 0) return std::nullopt;  // more than 9 digits
            fraction_ns += (text[at] - '0') * scale;
            scale /= 10;
        }
        if (at == first) return std::nullopt;
    }
    std::int64_t offset_s = 0;
    const std::string_view zone = text.substr(at);
    if (zone == "Z" || zone == "z") {
        offset_s = 0;
    } else {
        int offset_hours = 0, offset_minutes = 0;
        if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' ||
            !parse_digits(zone, 1, 2, offset_hours) || !parse_digits(zone, 4, 2, offset_minutes) ||
            offset_hours > 23 || offset_minutes > 59)
            return std::nullopt;
        offset_s = (zone[0] == '-' ? -1 : 1) * (std::int64_t{offset_hours} * 3600 + offset_minutes * 60);
    }
    std::tm parts{};
    parts.tm_year = year - 1900;
    parts.tm_mon = month - 1;
    parts.tm_mday = day;
    parts.tm_hour = hour;
    parts.tm_min = minute;
    parts.tm_sec = second;
    const std::int64_t utc_s = static_cast<std::int64_t>(timegm(&parts)) - offset_s;
    return utc_s * 1'000'000'000 + fraction_ns;
}

}  // namespace pybox
