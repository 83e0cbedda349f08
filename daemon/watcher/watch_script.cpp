#include "daemon/watcher/watch_script.hpp"

#include "common/sha256.hpp"

namespace pybox::watcher {

const std::string& watch_script_sha256()
{
    static const std::string digest = sha256_hex(watch_script());
    return digest;
}

std::vector<std::string> watch_command(const WatchTarget& target, const WatchSchedule& schedule,
                                       std::string_view script)
{
    return {"/bin/sh",
            "-c",
            std::string(script),
            "pybox-watch",
            std::to_string(static_cast<int>(target.version)),
            target.mount_root,
            target.box_cgroup,
            target.run_cgroup,
            std::to_string(schedule.fast_gap.count()),
            std::to_string(schedule.fast_samples),
            std::to_string(schedule.slow_gap.count()),
            std::to_string(schedule.max_samples),
            std::to_string(schedule.max_run.count() / 10),
            std::to_string(schedule.final_gap.count()),
            std::to_string(schedule.final_polls)};
}

}  // namespace pybox::watcher
