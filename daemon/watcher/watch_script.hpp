// The kernel watcher's script (watch.sh, embedded at build time) and the command line that
// runs it. The daemon runs exactly watch_command(...) (locally, or later in an ssh exec
// channel); the script prints the format that watch_output.hpp parses. Pure: nothing here
// starts a process.
#pragma once

#include "daemon/watcher/watch_output.hpp"
#include "daemon/watcher/watch_schedule.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace pybox::watcher {

// The text of watch.sh, byte for byte.
std::string_view watch_script();
// Lower-case hex SHA-256 of watch_script(), for the receipt's `configured`.
const std::string& watch_script_sha256();

// Where the watcher reads. Paths are given as they are; nothing is checked or quoted here (they
// reach the script as separate arguments, never through a shell's parsing).
struct WatchTarget {
    CgroupVersion version = CgroupVersion::v1;
    std::string mount_root;  // e.g. /sys/fs/cgroup
    std::string box_cgroup;  // relative to a controller's root, e.g. /pybox-<inst>/<run>/<container id>
    std::string run_cgroup;  // the run parent PyBox owns, e.g. /pybox-<inst>/<run>
};

// {"/bin/sh", "-c", <script>, "pybox-watch", <version>, <mount_root>, <box_cgroup>,
//  <run_cgroup>, <fast_gap_ms>, <fast_samples>, <slow_gap_ms>, <max_samples>, <max_run_cs>,
//  <final_gap_ms>, <final_polls>}
// `script` is watch_script() unless the daemon's config names another (for tests).
std::vector<std::string> watch_command(const WatchTarget& target, const WatchSchedule& schedule,
                                       std::string_view script = watch_script());

}  // namespace pybox::watcher
