#include "daemon/model/model_retry.hpp"

#include "daemon/model/model_limits.hpp"

#include <array>
#include <charconv>
#include <ctime>

namespace pybox::model {

namespace {

std::optional<int> number(std::string_view text, std::size_t digits)
{
    if (text.size() != digits) return std::nullopt;
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110's IMF-fixdate, the only form a sender may generate).
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text)
{
    static constexpr std::array<std::string_view, 7> k_days{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr std::array<std::string_view, 12> k_months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' || text[16] != ' ' ||
        text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT")
        return std::nullopt;
    bool day_known = false;
    for (const auto day : k_days) day_known = day_known || text.substr(0, 3) == day;
    int month = -1;
    for (std::size_t i = 0; i < k_months.size(); ++i)
        if (text.substr(8, 3) == k_months[i]) month = static_cast<int>(i);
    const auto mday = number(text.substr(5, 2), 2);
    const auto year = number(text.substr(12, 4), 4);
    const auto hour = number(text.substr(17, 2), 2);
    const auto minute = number(text.substr(20, 2), 2);
    const auto second = number(text.substr(23, 2), 2);
    if (!day_known || month < 0 || !mday || !year || !hour || !minute || !second || *mday < 1 || *mday > 31 ||
        *year < 1970 || *hour > 23 || *minute > 59 || *second > 60)
        return std::nullopt;
    std::tm fields{};
    fields.tm_year = *year - 1900;
    fields.tm_mon = month;
    fields.tm_mday = *mday;
    fields.tm_hour = *hour;
    fields.tm_min = *minute;
    fields.tm_sec = *second;
    const std::time_t seconds = ::timegm(&fields);
    if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
    return std::chrono::system_clock::from_time_t(seconds);
}

}  // namespace

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value,
                                                      std::chrono::system_clock::time_point now)
{
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (!value.empty() && value.size() <= 9 && value.find_first_not_of("0123456789") == std::string_view::npos)
        return std::chrono::seconds(*number(value, value.size()));
    const auto date = parse_http_date(value);
    if (!date) return std::nullopt;
    if (*date <= now) return std::chrono::seconds(0);
    // Rounded up: waiting a fraction less than asked would be refused again.
    return std::chrono::ceil<std::chrono::seconds>(*date - now);
}

std::chrono::milliseconds backoff_delay(int failed_tries)
{
    auto delay = k_backoff_first;
    for (int i = 1; i < failed_tries && delay < k_backoff_longest; ++i) delay *= 2;
    return std::min(delay, k_backoff_longest);
}

bool is_retried_status(unsigned status) { return status == 429 || (status >= 500 && status <= 599); }

RetryPlan plan_retry(unsigned status, int tries_done, std::optional<std::chrono::seconds> retry_after)
{
    if (!is_retried_status(status)) return {false, {}, "an answer of " + std::to_string(status) + " is not tried again"};
    if (tries_done >= k_max_tries) return {false, {}, "tried " + std::to_string(tries_done) + " times"};
    if (retry_after && *retry_after > k_max_retry_after)
        return {false, {},
                "it asked to wait " + std::to_string(retry_after->count()) + " s (Retry-After), longer than the " +
                    std::to_string(k_max_retry_after.count()) + " s PyBox waits"};
    if (retry_after) return {true, std::chrono::duration_cast<std::chrono::milliseconds>(*retry_after), {}};
    return {true, backoff_delay(tries_done), {}};
}

}  // namespace pybox::model
