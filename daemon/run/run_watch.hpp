// RunWatch: the kernel watcher's part in one run. Before the box is created it places the run
// under a run parent of its own (run_cgroup.hpp) on the CgroupHost; once the box has started it
// runs the watcher script on the box's cgroup; when the engine reports the exit it asks for the
// final reading; after the box is removed it collects the output, parses it strictly, turns it
// into observed.resources (watcher/resource_summary.hpp) and removes the run parent. A box no
// watcher ran for has the resources its engine observed, when it observed any (a cluster's
// kubelet samples), else none and the reason.
//
// Nothing here can fail the run: a host that cannot be watched (no CgroupHost: the reason the
// WatchSetup gives, such as config.json; an unknown
// cgroup driver, a run parent that cannot be made, a watcher that will not start or prints
// something unexpected) yields resources with status UNKNOWN or UNREADABLE and the reason.
//
// Ownership: borrows the WatchSetup (its CgroupHost may be null: the watcher is switched
// off), which must outlive it. Lives in the run's coroutine frame; all calls on the daemon's executor.
#pragma once

#include "daemon/engine/box_engine.hpp"
#include "daemon/run/run_cgroup.hpp"
#include "daemon/watcher/cgroup_host.hpp"
#include "daemon/watcher/process_end_log.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pybox::daemon {

namespace json = boost::json;
namespace net = boost::asio;

// Why runs are not watched, as the receipt says it (observed.resources.reason).
inline constexpr std::string_view k_watcher_off_in_config =
    "the kernel watcher is switched off in this daemon's config.json (\"watcher\": false)";

// Where the kernel's record of the boxes' process ends is read (watcher/process_end_log.hpp):
// the daemon's own log for an engine on this kernel, none for one on another host.
struct ProcessEnds {
    watcher::ProcessEndLog* log = nullptr;
    std::string unread;  // why there is none, as the receipt says it (unknown.program_end)
};

// How this daemon's runs are watched.
struct WatchSetup {
    watcher::CgroupHost* host = nullptr;  // null: the watcher is off, for `off_reason`
    std::string script;                   // the watcher script's text (the built-in watch.sh by default)
    std::string off_reason = std::string(k_watcher_off_in_config);  // why, when host is null
    ProcessEnds process_ends = {};
};

// An engine's WatchSetup: `host` and `process_ends` unless config.json switches the watcher off,
// or the engine's boxes cannot be watched at all (`unwatched`, why, as the receipt says it: a
// cluster's nodes run no PyBox agent); an empty `unwatched` says they can.
WatchSetup engine_watch_setup(bool watcher_in_config, watcher::CgroupHost* host, std::string script,
                              ProcessEnds process_ends, std::string_view unwatched);

class RunWatch {
public:
    explicit RunWatch(const WatchSetup& setup)
        : m_host(setup.host), m_script(setup.script), m_off_reason(setup.off_reason), m_process_ends(setup.process_ends)
    {
    }
    ~RunWatch();
    RunWatch(const RunWatch&) = delete;
    RunWatch& operator=(const RunWatch&) = delete;

    // Before create: makes the run parent. Returns the box's CgroupParent, or "" when the run is
    // not watched (the reason is kept for the receipt).
    net::awaitable<std::string> prepare(Expected<CgroupFacts> facts, std::string installation_id, std::string run_id);
    // After a successful start: starts the watcher on the box's cgroup, where `engine` placed the
    // box `box_id` under the run parent.
    void start(const engine::BoxEngine& engine, std::string_view box_id, double deadline_s);
    // Whether a watcher runs for this box.
    bool watching() const { return m_session != nullptr; }
    // Whether first_process() has a use: a watcher runs, or the kernel's record is read.
    bool wants_first_process() const { return watching() || m_process_ends.log != nullptr; }
    // The engine named the box's first process on its host (BoxState.first_pid): from now the
    // kernel's record of its end and of its interpreter's is kept (events from `started_mono_ns`,
    // the start call, on); when a watcher runs, the first process's end asks it for the final
    // reading at once, while the box's own cgroup still exists.
    void first_process(std::int64_t pid, std::int64_t started_mono_ns);
    // The engine reported the exit, or the box is being removed: ask for the final reading.
    void exit_observed();
    // After the box is removed (or was never created): collects the watcher's output and removes
    // the run parent. `from_engine` is what the engine itself observed of the box's resources
    // (engine::BoxEnd::resources()), which the receipt says instead when no watcher ran for the box.
    net::awaitable<void> finish(std::optional<ResourceObservation> from_engine = std::nullopt);

    // observed.resources, and the unknown entries that go with it (after finish()).
    const json::value& resources() const { return m_resources; }
    const std::vector<std::pair<std::string, std::string>>& unknown() const { return m_unknown; }
    // The kernel's OOM-kill count for the box: exact when read after the run, else a count above
    // zero that a sample saw; nullopt when neither.
    std::optional<std::int64_t> oom_kills() const { return m_oom_kills; }
    // What the kernel recorded of the first process's and its interpreter's ends (after
    // finish()); nullopt when it was not read, for process_ends_unread().
    const std::optional<watcher::FollowedEnds>& process_ends() const { return m_ends; }
    std::string process_ends_unread() const;

private:
    void not_watched(std::string reason);

    watcher::CgroupHost* m_host;
    std::string_view m_script;
    std::string_view m_off_reason;
    std::optional<RunCgroup> m_cgroup;
    bool m_parent_created = false;
    std::string m_box_path;
    std::unique_ptr<watcher::WatchSession> m_session;
    std::optional<std::string> m_not_watched;
    json::value m_resources;
    std::vector<std::pair<std::string, std::string>> m_unknown;
    std::optional<std::int64_t> m_oom_kills;
    ProcessEnds m_process_ends;
    std::optional<std::int64_t> m_followed_pid;  // set only with a log: the box it follows
    std::optional<watcher::FollowedEnds> m_ends;
};

}  // namespace pybox::daemon
