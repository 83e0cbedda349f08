// Where a run's box lives in the cgroup tree, and the run parent PyBox owns above it. Pure.
//
// Every box gets a parent cgroup of its own (the spec's cgroup_parent), one per run, under one
// PyBox cgroup per installation: /pybox-<installation key>/<run id>, where the key is the first
// 16 hex digits of the installation ID's SHA-256 (a box reads its own cgroup path, and the
// installation ID, the owner label of every box, has no business inside one). The engine
// creates the box's cgroup below it, where its backend says (BoxEngine::box_cgroup: Docker's
// cgroupfs driver names it <parent>/<container id>). The run parent outlives the box's
// cgroup, so the hierarchical counters it keeps are the box's final totals (docs/how-it-works.md,
// "The kernel watcher"); no other box runs under it, so nothing mixes into the run's counters.
// It carries no limits of its own: the box's limits are the policy's, read back before start.
//
// Only the cgroupfs driver is placed this way (v1 and v2). The systemd driver needs slices
// created through systemd, which PyBox does not do: run_cgroup_for says so, and the run goes
// ahead without a run parent and without the watcher.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_facts.hpp"

#include <string>
#include <string_view>

namespace pybox::daemon {

using engine::CgroupFacts;

struct RunCgroup {
    int version = 0;
    // "/pybox-<installation key>/<run>": the box's cgroup parent, and the run parent's path below each
    // v1 controller's mount (or below the unified mount in v2).
    std::string parent;
};

// The run parent of one run. Fails ("cgroup_unsupported") for drivers PyBox cannot place.
Expected<RunCgroup> run_cgroup_for(const CgroupFacts& facts, std::string_view installation_id,
                                   std::string_view run_id);

// "/pybox-<installation key>/<run>": the run parent's path, whatever the driver.
std::string run_parent_path(std::string_view installation_id, std::string_view run_id);

}  // namespace pybox::daemon
