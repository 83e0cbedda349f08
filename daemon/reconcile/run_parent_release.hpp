// The sweep's RunReleaser for one host's run parents (sweeper.hpp): removes the run parent of a
// run the sweep settles. The sweep settles a run only once its engine answers and lists no box
// of it, so whatever still holds the run parent busy is something the engine lost (runc's init
// of a box whose start was cut short, seen on a loaded machine, and its cgroup): the run parent
// is emptied (CgroupHost::empty_run_parent: processes killed, said in the daemon's log; empty
// cgroups below it removed) and its removal tried again, every k_release_retry_interval, at
// most k_release_retries times.
//
// Ownership: borrows `host`, which must outlive the releaser. Executor: the daemon's; the retries
// wait on timers, never blocking it.
#pragma once

#include "daemon/reconcile/sweeper.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <chrono>
#include <string>

namespace pybox::daemon {

inline constexpr std::chrono::milliseconds k_release_retry_interval{50};
inline constexpr int k_release_retries = 20;

RunReleaser run_parent_releaser(watcher::CgroupHost& host, std::string installation_id);

}  // namespace pybox::daemon
