// BoxEngine: what PyBox asks of a container engine, at the level of meaning: make a box from a
// spec, check its effective settings against that spec, launch it (a running box whose stdin
// takes the program, whose output comes as chunks, box_output.hpp, and whose end is reported),
// kill, inspect, list and remove boxes. What is asked of the engine itself (does it answer, its
// clock, its cgroups) is its EngineProbe's (engine_probe.hpp). Nothing above
// daemon/engine/ knows how an engine spells any of this: the facts come back typed
// (engine_facts.hpp), each with the engine's own record (`raw`) where the receipt keeps it as
// evidence.
//
// DockerBoxEngine (docker_box_engine.hpp) is the implementation over the Docker Engine API;
// tests/support/fake_box_engine.hpp is a scripted fake with fault injection for run/'s unit
// tests. Implementations run their calls as coroutines on the executor of whoever built them,
// are not thread-safe, and fail with the Error codes of engine_call.hpp ("engine_unreachable",
// "engine_timeout", "engine_protocol", "engine_no_such_object", "engine_error"). Every call takes
// the timeout of its whole exchange.
#pragma once

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/resource_observation.hpp"
#include "daemon/engine/box_output.hpp"
#include "daemon/engine/engine_call.hpp"
#include "daemon/engine/engine_facts.hpp"
#include "proto/box_policy.hpp"

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

namespace pybox::engine {

// Everything a box is made from. The settings come from the fixed policy; the rest names the
// box and its first process.
struct BoxSpec {
    std::string name;
    std::string image_id;
    std::vector<std::string> command;      // the first process, argv
    std::vector<std::string> environment;  // exactly this, nothing from the host
    std::string hostname;
    proto::BoxPolicy policy;
    // The run parent PyBox made for the box on the engine's host (run/run_cgroup.hpp), under which
    // a backend that can places the box (box_cgroup() then says where); empty = the engine's
    // default.
    std::string cgroup_parent;
    std::vector<std::pair<std::string, std::string>> labels;
    // How long the first process may run once it has its program: the box timer (the deadline
    // plus its margin), which the first process keeps itself; an engine that can end a box on
    // its own after a time (a Pod's activeDeadlineSeconds) uses it as a backstop. 0: not known
    // when the box is made (a warm box, whose program comes later).
    double box_timer_s = 0;
};

// One setting the engine reports differently from the spec.
struct SettingMismatch {
    std::string field;     // the engine's name for it, e.g. "HostConfig.Memory"
    std::string expected;  // in the engine's notation
    std::string observed;  // in the engine's notation, or "missing"
};

struct SettingsCheck {
    std::vector<SettingMismatch> mismatches;  // empty: the box is exactly as specified
    // What was read and compared, as the engine reported it, plus the mismatches: the receipt's
    // observed.effective_policy. A seccomp profile is named by the SHA-256 of its text.
    boost::json::object record;
    // What the settings read back leave unknown though they match the spec (a Pod under its
    // runtime's default seccomp profile): the receipt's `unknown` keys with their reasons.
    std::vector<std::pair<std::string, std::string>> unknown;
};

struct CreatedBox {
    std::string id;
    std::vector<std::string> warnings;  // non-empty: the engine changed something it was asked
};

// A launched box's stdin and output.
class BoxStreams {
public:
    virtual ~BoxStreams() = default;
    // Writes all bytes to the box's stdin.
    virtual net::awaitable<Expected<void>> write_stdin(std::string_view bytes, Timeout timeout) = 0;
    // Ends the box's stdin (the program reads its end).
    virtual Expected<void> close_stdin() = 0;
    // The next chunks of output, in the order the box wrote them; none (an empty vector) at the
    // end of the output; an Error when the stream broke. No timeout: the caller bounds it
    // (cancel() or the run's deadline).
    virtual net::awaitable<Expected<std::vector<OutputChunk>>> read_output() = 0;
    // Set once the engine's output stream broke its own format (what it carried from there on is
    // lost; reading drains it to its end), or ended inside a unit of that format: why, in a
    // sentence. Read it once the output ended or broke.
    virtual std::optional<std::string> malformed() const = 0;
    // Stops the streams; a pending read_output() completes with an error.
    virtual void cancel() = 0;
    // Once the output ended or broke: the program's environment as the box reported it, or why
    // it is not known (a backend whose boxes report none says why).
    virtual EnvironmentReport environment() const = 0;
};

// A launched box's end.
class BoxEnd {
public:
    virtual ~BoxEnd() = default;
    // Completes when the box's first process has ended (or the timeout passes: "engine_timeout").
    virtual net::awaitable<Expected<void>> ended(Timeout timeout) = 0;
    // Stops waiting; ended() then fails promptly ("cancelled").
    virtual void cancel() = 0;
    // Once the end was observed or the wait stopped: what the backend observed of the box's
    // resource use from its launch until then, which run/ reports for a box the kernel watcher
    // does not watch (run_watch.hpp). nullopt: the backend observes none (a Docker engine's
    // boxes are the watcher's).
    virtual std::optional<ResourceObservation> resources() const { return std::nullopt; }
};

// A box that launch_box() started: nothing it wrote and not its end can have been missed.
struct LaunchedBox {
    std::unique_ptr<BoxStreams> streams;
    std::unique_ptr<BoxEnd> end;
    // Right before the backend asked for the start: the earliest its first process can have begun.
    MonoClock::time_point start_asked;
};

// The step of a launch that failed, with its Error.
struct LaunchFailure {
    enum class Step {
        streams,  // the box's stdin and output could not be connected
        end,      // PyBox could not register for the box's end
        start,    // the box did not start
    };
    Step step;
    Error error;
    // The box cannot start as it was made, but a box made again from the same spec can: the
    // engine recognised why from its own report and makes the next box otherwise (a Kubernetes
    // node without PyBox's seccomp profile: the next Pod asks for the runtime's default, and its
    // check_settings() says so). run/ then removes this box, confirms it is gone and makes the box
    // once more; a second failure is the run's.
    bool remake = false;
};

// The time budgets of a launch: of connecting the streams and registering for the end, each,
// and of the start.
struct LaunchTimeouts {
    Timeout connect;
    Timeout start;
};

enum class BoxKillOutcome {
    killed,
    already_ended,  // the box's first process had ended before the kill
};

class BoxEngine {
public:
    virtual ~BoxEngine() = default;

    // The engine's address for messages and receipts, e.g. "unix:///run/docker.sock".
    virtual std::string describe() const = 0;

    virtual net::awaitable<Expected<CreatedBox>> create_box(const BoxSpec& spec, Timeout timeout) = 0;
    virtual net::awaitable<Expected<BoxInspection>> inspect_box(std::string_view id, Timeout timeout) = 0;
    // Compares what an inspection reports with the spec the box was made from, setting by
    // setting: anything missing, different or wider is a mismatch. Pure. Asked before the start
    // and again of the ended box: an engine may report a part of the box only once it ran (a
    // Pod's status names the image its node ran), and checks it then.
    virtual SettingsCheck check_settings(const BoxSpec& spec, const BoxInspection& inspection) const = 0;
    // Connects the box's stdin and output, registers for its end and starts it, in whatever
    // order the backend needs so that no output and not the end is missed. On a failure what
    // the launch had connected is closed; the box stays, for remove_box().
    virtual net::awaitable<boost::system::result<LaunchedBox, LaunchFailure>> launch_box(std::string_view id,
                                                                                        LaunchTimeouts timeouts) = 0;
    // SIGKILL to the box's first process.
    virtual net::awaitable<Expected<BoxKillOutcome>> kill_box(std::string_view id, Timeout timeout) = 0;
    // Removes the box and its anonymous volumes, by force; a box already gone counts as removed.
    virtual net::awaitable<Expected<void>> remove_box(std::string_view id, Timeout timeout) = 0;
    // Every box (running or not) carrying all of `labels` ("key=value").
    virtual net::awaitable<Expected<std::vector<ListedBox>>> list_boxes(const std::vector<std::string>& labels,
                                                                       Timeout timeout) = 0;

    // Whether a box's first process starts before its program is written, whatever the run (a
    // Pod: the kubelet starts it on its own, and the attach comes later): its box timer must then
    // start at delivery, as a warm box's does (proto::warm_box_command), or the wait for the
    // attach would count against the program.
    virtual bool starts_before_delivery() const { return false; }

    // Where the kernel watcher finds a box this backend made under `run_parent` (the spec's
    // cgroup_parent, a cgroup PyBox made for the run on the engine's host): the box's own cgroup,
    // below the same mounts. nullopt: this backend does not place its boxes under a run parent
    // (a Pod's cgroup is the kubelet's), so the watcher has nothing to read.
    virtual std::optional<std::string> box_cgroup(std::string_view run_parent, std::string_view box_id) const
    {
        (void)run_parent, (void)box_id;
        return std::nullopt;
    }

    // How a box's output reaches PyBox, for the receipt's capture.provenance, e.g. "target byte
    // streams via bounded Docker attach; untrusted content".
    virtual std::string output_provenance() const = 0;

    // What this engine cannot express in a box or observe of it, whatever the run: the
    // receipt's `unknown` keys (docs/receipt.md "unknown") with their reasons. None for an
    // engine that keeps the whole policy and whose boxes PyBox watches.
    virtual std::vector<std::pair<std::string, std::string>> always_unknown() const { return {}; }
};

}  // namespace pybox::engine
