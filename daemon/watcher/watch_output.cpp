#include "daemon/watcher/watch_output.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace pybox::watcher {

namespace {

constexpr std::string_view k_v1_keys[] = {
    "memory.usage_in_bytes", "memory.max_usage_in_bytes", "memory.memsw.usage_in_bytes",
    "memory.memsw.max_usage_in_bytes", "memory.oom_control.oom_kill",
    "cpu.stat.nr_periods", "cpu.stat.nr_throttled", "cpu.stat.throttled_time", "cpuacct.usage",
    "cpuacct.usage_user", "cpuacct.usage_sys", "pids.current", "pids.peak", "pids.events.max"};

constexpr std::string_view k_v2_keys[] = {
    "memory.current", "memory.peak", "memory.swap.current", "memory.swap.peak", "memory.events.max",
    "memory.events.oom", "memory.events.oom_kill", "cpu.stat.usage_usec", "cpu.stat.user_usec",
    "cpu.stat.system_usec", "cpu.stat.nr_periods", "cpu.stat.nr_throttled", "cpu.stat.throttled_usec",
    "pids.current", "pids.peak", "pids.events.max", "pids.events.local.max"};

// 0 to 2^63-1 in plain decimal digits; anything else (sign, space, empty) is nullopt.
std::optional<std::int64_t> parse_count(std::string_view text)
{
    if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// Splits on single spaces; nullopt when a token is empty (double, leading or trailing space).
std::optional<std::vector<std::string_view>> split_tokens(std::string_view line)
{
    std::vector<std::string_view> tokens;
    while (true) {
        const auto space = line.find(' ');
        tokens.push_back(line.substr(0, space));
        if (tokens.back().empty()) return std::nullopt;
        if (space == std::string_view::npos) return tokens;
        line.remove_prefix(space + 1);
    }
}

std::string quoted(std::string_view text)
{
    constexpr std::size_t k_shown = 40;
    std::string out = "\"";
    for (const char c : text.substr(0, k_shown)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out + (text.size() > k_shown ? "...\"" : "\"");
}

class Parser {
public:
    explicit Parser(CgroupVersion expected) : m_keys(watch_keys(expected)) { m_record.version = expected; }

    Expected<WatchRecord> parse(std::string_view text)
    {
        if (text.size() > limits::k_watch_max_output_bytes)
            return fail("the output is longer than " + std::to_string(limits::k_watch_max_output_bytes) + " bytes");
        if (text.empty()) {
            m_line = 1;
            return fail("the output is empty: no header");
        }
        while (!text.empty()) {
            ++m_line;
            if (m_line > limits::k_watch_max_lines)
                return fail("more than " + std::to_string(limits::k_watch_max_lines) + " lines");
            const auto newline = text.find('\n');
            if (newline == std::string_view::npos) return fail("the last line has no newline (output cut)");
            const auto line = text.substr(0, newline);
            text.remove_prefix(newline + 1);
            if (line.size() > limits::k_watch_max_line_bytes)
                return fail("longer than " + std::to_string(limits::k_watch_max_line_bytes) + " bytes");
            if (auto ok = parse_line(line); !ok) return ok.error();
        }
        return std::move(m_record);
    }

private:
    Error fail(const std::string& why) const
    {
        const auto where = m_line == 0 ? std::string() : "line " + std::to_string(m_line) + ": ";
        return make_error(api_error::k_watch_output_invalid, "watcher output: " + where + why + ".");
    }

    Expected<void> parse_line(std::string_view line)
    {
        const auto tokens = split_tokens(line);
        if (!tokens) return fail("empty field (a double, leading or trailing space)");
        const auto& t = *tokens;
        if (m_line == 1) return parse_header(t);
        if (m_record.end) return fail("a line after the end line");
        if (t[0] == "sample") return parse_reading(t, m_record.samples);
        if (t[0] == "final") return parse_final(t);
        if (t[0] == "end") return parse_end(t);
        return fail("unknown line kind " + quoted(t[0]));
    }

    Expected<void> parse_header(const std::vector<std::string_view>& t)
    {
        if (t[0] != "pybox-watch") return fail("not a pybox-watch header");
        if (t.size() != 4) return fail("the header has " + std::to_string(t.size()) + " fields, not 4");
        if (t[1] != "1") return fail("output format version " + quoted(t[1]) + " is not 1");
        const auto expected = std::to_string(static_cast<int>(m_record.version));
        if (t[2] != "cgroup=" + expected)
            return fail("the header says " + quoted(t[2]) + " but the watcher was started for cgroup=" + expected);
        if (!t[3].starts_with("start=")) return fail("the header has no start time");
        return parse_time(t[3].substr(6), m_record.start_cs);
    }

    Expected<void> parse_time(std::string_view text, std::int64_t& out)
    {
        const auto time = parse_count(text);
        if (!time) return fail("the time " + quoted(text) + " is not a number of centiseconds");
        if (*time < m_last_time) return fail("time goes backwards");
        m_last_time = *time;
        out = *time;
        return {};
    }

    Expected<void> parse_final(const std::vector<std::string_view>& t)
    {
        if (t.size() < 3) return fail("a final line without a scope");
        if (t[2] == "box") {
            if (m_record.final_box) return fail("a second final reading of the box");
            m_record.final_box.emplace();
            return parse_reading_into(t, "box", *m_record.final_box);
        }
        if (!m_record.final_box) return fail("the parent's final reading before the box's");
        if (m_record.final_parent) return fail("a second final reading of the parent");
        m_record.final_parent.emplace();
        return parse_reading_into(t, "parent", *m_record.final_parent);
    }

    Expected<void> parse_reading(const std::vector<std::string_view>& t, std::vector<Reading>& into)
    {
        if (m_record.final_box) return fail("a sample after a final reading");
        into.emplace_back();
        return parse_reading_into(t, "box", into.back());
    }

    // t: <kind> <cs> <scope> (gone | key=value...)
    Expected<void> parse_reading_into(const std::vector<std::string_view>& t, std::string_view scope,
                                      Reading& reading)
    {
        if (t.size() < 4) return fail("a reading needs a time, a scope and values or gone");
        if (auto ok = parse_time(t[1], reading.time_cs); !ok) return ok;
        if (t[2] != scope) return fail("the scope is " + quoted(t[2]) + ", expected " + std::string(scope));
        if (t[3] == "gone") {
            if (t.size() != 4) return fail("values after gone");
            reading.gone = true;
            return {};
        }
        for (std::size_t at = 3; at < t.size(); ++at) {
            const auto equals = t[at].find('=');
            if (equals == std::string_view::npos) return fail("field " + quoted(t[at]) + " is not key=value");
            const auto key = t[at].substr(0, equals);
            const auto text = t[at].substr(equals + 1);
            if (std::find(m_keys.begin(), m_keys.end(), key) == m_keys.end())
                return fail("unknown key " + quoted(key) + " for cgroup v" +
                            std::to_string(static_cast<int>(m_record.version)));
            CounterValue value;
            if (text != "-") {
                value = parse_count(text);
                if (!value) return fail("the value of " + std::string(key) + " is not a count: " + quoted(text));
            }
            if (!reading.values.emplace(std::string(key), value).second)
                return fail("duplicate key " + std::string(key));
        }
        for (const auto key : m_keys)
            if (!reading.values.contains(key)) return fail("missing key " + std::string(key));
        return {};
    }

    Expected<void> parse_end(const std::vector<std::string_view>& t)
    {
        if (t.size() != 2) return fail("the end line needs exactly one reason");
        static constexpr std::array k_ends = {WatchEnd::final, WatchEnd::wait_timeout, WatchEnd::time,
                                              WatchEnd::signal};
        const auto end = std::find_if(k_ends.begin(), k_ends.end(), [&](WatchEnd e) { return to_string(e) == t[1]; });
        if (end == k_ends.end()) return fail("unknown end reason " + quoted(t[1]));
        const bool has_finals = m_record.final_box.has_value();
        if (*end == WatchEnd::final && !(has_finals && m_record.final_parent))
            return fail("end final without both final readings");
        if (*end != WatchEnd::final && has_finals) return fail("final readings but the end reason is " + quoted(t[1]));
        m_record.end = *end;
        return {};
    }

    std::span<const std::string_view> m_keys;
    WatchRecord m_record;
    std::size_t m_line = 0;
    std::int64_t m_last_time = 0;
};

}  // namespace

std::span<const std::string_view> watch_keys(CgroupVersion version)
{
    if (version == CgroupVersion::v1) return k_v1_keys;
    return k_v2_keys;
}

CounterValue Reading::value(std::string_view key) const
{
    const auto found = values.find(key);
    return found == values.end() ? std::nullopt : found->second;
}

std::string_view to_string(WatchEnd end)
{
    switch (end) {
    case WatchEnd::final:
        return "final";
    case WatchEnd::wait_timeout:
        return "wait_timeout";
    case WatchEnd::time:
        return "time";
    case WatchEnd::signal:
        return "signal";
    }
    return "unknown";
}

Expected<WatchRecord> parse_watch_output(std::string_view text, CgroupVersion expected)
{
    return Parser(expected).parse(text);
}

}  // namespace pybox::watcher
