// What one sealed run was asked to do (RunDescription) and what its phases observed
// (RunEvidence), kept apart from the receipt that assemble_receipt() (receipt_assembly.hpp) makes
// of them. BoxRun (box_run.hpp) fills both as the run goes; they are plain values, with no I/O.
//
// The phases write down what happened, in the order it happened, and draw no conclusion: when
// each phase ran and how it ended, which budgets fired, what the engine answered and what it
// refused, what the output stream carried, what the watcher read, whether the box is gone. How
// the run ended, which explanations apply and what is unknown are the assembly's to decide.
#pragma once

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "daemon/engine/engine_facts.hpp"
#include "daemon/run/box_removal.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/run/output_capture.hpp"
#include "daemon/watcher/process_end_log.hpp"
#include "proto/box_policy.hpp"
#include "proto/receipt.hpp"
#include "proto/run_request.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pybox::daemon {

// An image as checked against the image registry and the engine right before a run.
struct VerifiedImage {
    std::string image_id;
    std::string recipe_sha256;
};

enum class BoxKind { cold, warm };

// What was asked: the request (a warm box's is a placeholder for its image until a request
// takes it), the box's policy, image and names, and how it is started.
struct RunDescription {
    BoxKind kind = BoxKind::cold;
    proto::RunRequest request;
    proto::BoxPolicy policy;
    VerifiedImage image;
    BoxIdentity box;
    std::string created_at;  // RFC 3339, when the box was named
    proto::EngineRef engine;
    std::vector<std::string> command;                // the box's first process
    std::optional<std::string> files_helper_sha256;  // runs that move files

    // The box timer's value: the deadline and its margin.
    double guest_timer_s() const { return request.timeout_s + limits::k_box_timer_margin_s; }
};

// One phase: when it began and ended on the daemon's monotonic clock, and how it ended ("ok",
// "timeout", "failed", "skipped").
struct PhaseRecord {
    std::string name;
    MonoClock::time_point begun;
    MonoClock::time_point ended;
    std::string outcome;
};

// Something a phase met that the receipt explains, with the failure it carries (the engine's,
// or the attempt log's for attempt_note_stale) or the names it lists (the engine's warnings for
// create_warnings, the mismatched fields for policy_mismatch and policy_mismatch_after_run).
struct Problem {
    enum class Kind {
        create_failed,
        attempt_note_stale,  // the container ID could not be written into the attempt note
        create_warnings,
        verify_failed,
        policy_mismatch,
        policy_mismatch_after_run,  // the ended box's report differs from the spec (POLICY_MISMATCH_AFTER_RUN)
        attach_failed,        // the launch could not connect the box's streams (ATTACH_FAILED)
        wait_not_registered,  // the launch could not register for the box's end
        start_failed,
        wait_failed,  // the wait for the exit ended without it
        kill_failed,  // the kill at the deadline
    };
    Kind kind;
    Error error = {};
    std::vector<std::string> names = {};
};

// The first box of a run that the engine asked to make again, and why it could not start.
struct RemadeBox {
    std::string container_id;
    Error start_failure;
};

// The engine stopped answering mid-run: the exit was never reported, the final inspect failed
// and a ping failed too.
struct EngineGone {
    Error final_inspect;
    Error ping;
    std::optional<Error> wait;  // how the wait for the exit ended, when it ended without it
};

// What the kernel watcher left once the box was removed (run_watch.hpp).
struct WatchSummary {
    boost::json::value resources;
    std::vector<std::pair<std::string, std::string>> unknown;
    std::optional<std::int64_t> oom_kills;
    // The kernel's record of the first process's and the interpreter's ends, or why it is missing.
    std::optional<watcher::FollowedEnds> process_ends;
    std::string process_ends_unread;
};

struct RunEvidence {
    // Timings. `made` is when the BoxRun was made (a warm box: the start of its making);
    // `began` when the run's own timings start (its turn, or the request a warm box takes), and
    // `arrived` when that request reached the daemon; `ended` when the cleanup was done.
    MonoClock::time_point made;
    MonoClock::time_point began;
    std::optional<MonoClock::time_point> arrived;
    MonoClock::time_point ended;
    std::optional<std::vector<PhaseRecord>> preparation;  // a warm box's making, once a request took it
    std::vector<PhaseRecord> phases;                     // in order, from `began`
    std::vector<std::string> timeouts;                   // the budgets that fired, in that order
    std::optional<MonoClock::time_point> box_started;    // the start call's answer...
    std::optional<WallClock::time_point> box_started_wall;  // ...on the wall clock
    std::optional<MonoClock::time_point> program_started;   // its delivery (a cold box: the start)

    // What the engine can never observe or express (BoxEngine::always_unknown()), and how it
    // carries a box's output (BoxEngine::output_provenance()).
    std::vector<std::pair<std::string, std::string>> engine_unknown;
    std::string output_provenance;

    // The box, before its start.
    std::string container_id;  // empty: none was created
    boost::json::value effective_policy;  // the engine's settings as read back and compared
    // What those settings leave unknown (engine::SettingsCheck::unknown), as the last check said.
    std::vector<std::pair<std::string, std::string>> settings_unknown;
    bool policy_verified = false;
    // A first box that could not start as made, removed and confirmed gone before the box was
    // made once more (engine::LaunchFailure::remake).
    std::optional<RemadeBox> remade;
    std::vector<Problem> problems;  // in the order they were met

    // The run and its end.
    bool cancelled = false;  // the client went away
    std::optional<proto::KillAnswer> kill;  // nullopt: no kill was sent
    std::optional<std::int64_t> kill_sent_unix_ns;
    std::optional<MonoClock::time_point> kill_sent_mono;  // the same moment on the monotonic clock
    bool exit_observed = false;  // the engine reported the exit
    std::optional<engine::BoxState> final_state;  // the final inspect's, when it answered
    std::optional<EngineGone> engine_gone;
    std::optional<proto::ClockOffset> engine_clock_offset;
    proto::EngineClockNames engine_clocks;  // which clock the engine's own times come from
    std::optional<std::string> clock_read_failed;  // why the offset was not measured, when it was tried
    // The output as it was kept (both streams up to the output limit, their totals, a files
    // run's report), whether it ended, how it broke, and whether the engine's stream broke its
    // own format (engine::BoxStreams::malformed).
    OutputCapture output{0};
    bool stream_ended = false;
    std::optional<std::string> stream_error;
    std::optional<std::string> output_malformed;
    // What the box reported of the program's environment (engine::BoxStreams::environment),
    // once its output ended; nullopt when no output was read.
    std::optional<engine::EnvironmentReport> environment;
    WatchSummary watch;

    // The removal: nullopt when there was no box to remove.
    std::optional<RemovalOutcome> removal;
    // Why the attempt note could not be removed once the box was gone (or never made).
    std::optional<std::string> note_not_removed;

    // What the sweep of leftover boxes last did, as its summary read when the run ended (null: no
    // sweep): not the run's own, but the receipt's cleanup.reconciliation says it.
    boost::json::value reconciliation = nullptr;
};

}  // namespace pybox::daemon
