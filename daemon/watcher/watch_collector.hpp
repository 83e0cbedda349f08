// WatchCollector: what a WatchSession keeps of a watcher's stdout as it arrives, whoever runs
// the watcher (LocalCgroupHost's child process, SshCgroupHost's exec channel): the text up to
// limits::k_watch_max_output_bytes (the rest dropped and `truncated` set), whether the header
// line has arrived (signals may be sent from then on), and when the first sample arrived.
// Not thread-safe; lives on the session's executor.
#pragma once

#include "common/clock.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <string_view>

namespace pybox::watcher {

struct WatchCollector {
    MonoClock::time_point started = MonoClock::now();
    WatchOutput output;
    bool header_seen = false;

    void take(std::string_view bytes);
};

}  // namespace pybox::watcher
