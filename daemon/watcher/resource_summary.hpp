// What the kernel watcher observed, as the receipt's `observed.resources`: a pure function of
// the parsed watcher output (docs/receipt.md, "resources", documents every key).
//
// Each metric is named by its kernel file as cgroup v2 names it ("memory.peak", "cpu.stat.usage_usec",
// the seed's names); on cgroup v1 the file read for the same counter goes under that name
// ("memory.max_usage_in_bytes" as "memory.peak"), a counter only v1 has keeps its v1 name
// ("memory.memsw.max_usage_in_bytes"), and `kernel_file` is always the file actually read.
// CPU times are in microseconds (v1's nanoseconds are divided by 1000).
// Per metric: `first`, `last` and `max` of the box's samples (`first`: the earliest sample that
// read it, as the watcher starts: a warm box's at delivery); for counters a `final` value, taken only
// from a final reading made after the run's cgroup held no task: from the box's own cgroup
// when that reading found it, else from the run parent when this cgroup version keeps that
// counter hierarchically (the table in resource_summary.cpp), else null. Gauges have no final.
// The rule never claims more than was read: a counter without a final value is named in
// unknown `final_resource_counters` with why; a limit is "hit" only when its counter is above
// zero, and "not hit" only when its final value is zero.
//
// status: COLLECTED (some counter value was read; final_counters_complete and errors say what
// is missing, as in the seed), UNKNOWN (no counter value at all), UNREADABLE (the output broke
// the format; the run itself is unaffected).
#pragma once

#include "common/error.hpp"
#include "common/resource_observation.hpp"
#include "daemon/watcher/watch_output.hpp"

#include <boost/json/object.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pybox::watcher {

// `parsed` is parse_watch_output's result for a watcher started for `version`.
// `delivery_errors` are what went wrong around the output (the watcher was late, killed, or
// printed more than was kept): they join `errors`.
ResourceObservation summarize_resources(const Expected<WatchRecord>& parsed, CgroupVersion version,
                                        const std::vector<std::string>& delivery_errors = {});

// For a run whose watcher never produced output (it could not start, the box never ran, or its
// engine's boxes are not watched at all, as on a cluster): no cgroup file was read, so the
// summary names no cgroup version and its source says nothing was read.
inline constexpr std::string_view k_nothing_read_source = "none: no cgroup file of the box was read";
ResourceObservation resources_not_watched(const std::string& reason);

}  // namespace pybox::watcher
