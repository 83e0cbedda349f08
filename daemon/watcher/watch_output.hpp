// The kernel watcher's output (format version 1, printed by watch.sh) and its strict, bounded
// parser. The format, line by line (tokens separated by exactly one space, every line ends
// with "\n"):
//
//   pybox-watch 1 cgroup=<1|2> start=<cs>                     header, always first
//   sample <cs> box <key>=<value> ... | sample <cs> box gone  zero or more
//   final <cs> box <key>=<value> ...  | final <cs> box gone    only before `end final`
//   final <cs> parent <key>=<value> ... | final <cs> parent gone
//   end final|wait_timeout|time|signal                        last line
//
// <cs> is the watcher's kernel clock (/proc/uptime, CLOCK_BOOTTIME) in centiseconds and never
// goes backwards. A reading of a present cgroup carries every key of watch_keys(version)
// exactly once; <value> is a decimal integer (0 to 2^63-1) or "-" (could not be read).
// `end final` comes with both final readings, and final readings only with `end final`. The
// output may stop after any complete line (the watcher was killed): then `end` is absent.
//
// Anything else (a missing or foreign header, another cgroup version than expected, unknown,
// duplicate or missing keys, non-numeric values, time going backwards, lines after `end`,
// more than limits::k_watch_max_lines lines or k_watch_max_line_bytes per line or
// k_watch_max_output_bytes in all, an unterminated last line) is refused with an error naming
// the line and the reason. Pure: no I/O; fuzzed.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::watcher {

enum class CgroupVersion { v1 = 1, v2 = 2 };

// The raw kernel keys of one reading, in the order watch.sh prints them: the file name for a
// single-value file, "<file>.<key>" for a "key value" file (e.g. "cpu.stat.nr_throttled").
std::span<const std::string_view> watch_keys(CgroupVersion version);

// nullopt: the watcher could not read the value ("-": file or key missing, not an integer).
using CounterValue = std::optional<std::int64_t>;

struct Reading {
    std::int64_t time_cs = 0;
    bool gone = false;  // the cgroup directory did not exist; values is empty
    std::map<std::string, CounterValue, std::less<>> values;

    // The value of a key; nullopt when it was unreadable or the cgroup was gone.
    CounterValue value(std::string_view key) const;
};

enum class WatchEnd { final, wait_timeout, time, signal };
std::string_view to_string(WatchEnd end);

struct WatchRecord {
    CgroupVersion version = CgroupVersion::v1;
    std::int64_t start_cs = 0;
    std::vector<Reading> samples;       // the box's cgroup while the program ran
    std::optional<Reading> final_box;   // after the run's cgroup held no task (end == final)
    std::optional<Reading> final_parent;
    std::optional<WatchEnd> end;        // nullopt: the output stopped before its end line
};

// Parses the whole output of one watcher run that was started for `expected`. Fails with code
// "watch_output_invalid" and a message "watcher output: line N: why." (no line for the size limit).
Expected<WatchRecord> parse_watch_output(std::string_view text, CgroupVersion expected);

}  // namespace pybox::watcher
