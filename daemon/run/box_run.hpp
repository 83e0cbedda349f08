// BoxRun: one box and its run, from its identity to its receipt (docs/how-it-works.md, "One
// sealed run"). SealedRunService drives it; it owns nothing it is given (the engine and its probe, the attempt
// tracking and the watch setup must outlive it) and lives on the daemon's executor. Its phases
// write what they observe into a RunEvidence (run_evidence.hpp), and assemble() makes the
// receipt from it once the run is done (receipt_assembly.hpp). What its driver decides after the
// run (a box to remove again, why a warm box failed) it reads from the evidence, never from a
// receipt.
//
// A cold box is made for its request: identify(), prepare_watch(), write_attempt(), then
// execute() creates, verifies, starts and runs it, and removes it. A box that the engine cannot
// start as made but would make otherwise (engine::LaunchFailure::remake: a Kubernetes node
// without PyBox's seccomp profile) is removed, confirmed gone and made once more, and the
// receipt says so (BOX_REMADE).
//
// A warm box is made before any request (a WarmBoxKeeper keeps them: warm_box_keeper.hpp): the
// same identify(), prepare_watch() and write_attempt(), then prepare() creates it with the warm
// command (proto::warm_box_command: a fixed Perl PID 1 that starts `python3 -I -B -u -` at once,
// reads the box timer's value as its first line of stdin, then passes the program on and times
// the interpreter), verifies its policy and launches it (engine::BoxEngine::launch_box). Its first
// process then waits, reading stdin, with the interpreter up. A request takes it with
// still_usable() (the box still runs, with the same settings, and will not outlive its expiry
// label), adopt() and execute_warm(): at delivery the daemon writes the timer line (the run's
// deadline + the margin) and the program and closes stdin, so the deadline and the box timer
// both count from delivery and the program cannot set either. A warm box that is not used is
// removed with discard(). A box never runs two programs.
#pragma once

#include "common/clock.hpp"
#include "common/limits.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/engine/engine_probe.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/records/attempts.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/run/receipt_assembly.hpp"
#include "daemon/run/run_evidence.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/server/services.hpp"
#include "proto/run_request.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

// How runs record their attempts: the notes, this daemon's runs in progress (which the sweep
// leaves alone; may be null) and how long a box is kept before the sweep may remove it.
struct AttemptTracking {
    AttemptLog log;
    RunsInProgress* in_progress = nullptr;
    std::int64_t box_expiry_s = limits::k_box_expiry_s;
    // The engine these runs go to: its id in the pool (engine_entry.hpp), written in each note
    // (whose sweep is that engine's) and, with the dialer's address, in each receipt's `engine`.
    std::string engine_id{engine::k_local_engine_id};
};

class BoxRun {
public:
    // A cold box for `request`, or a warm one for `request.image` (the rest of a warm box's
    // request is replaced by adopt()). `policy` is the image's, as the request will get it.
    BoxRun(net::any_io_executor executor, engine::BoxEngine& engine, engine::EngineProbe& probe,
           const AttemptTracking& attempts,
           proto::RunRequest request, proto::BoxPolicy policy, const WatchSetup& watch,
           BoxKind kind);
    ~BoxRun();
    BoxRun(const BoxRun&) = delete;
    BoxRun& operator=(const BoxRun&) = delete;

    // A cold run's turn came: its own timings start now, and the time since `arrived` (when the
    // request reached the daemon) was its wait in the queue.
    void begin_after(MonoClock::time_point arrived);
    // After execute() or execute_warm(): what the sweep of leftover boxes last did, for the
    // receipt (run_evidence.hpp), then the run assembled from the evidence.
    void note_reconciliation(boost::json::value summary) { m_evidence.reconciliation = std::move(summary); }
    AssembledRun assemble() const { return assemble_receipt(m_description, m_evidence); }
    // The box, when one was made and its removal was not confirmed (the receipt's
    // REMOVAL_UNCONFIRMED).
    std::optional<std::string> unconfirmed_box() const;
    // After prepare() failed: the first problem's sentence, as the receipt would explain it.
    std::string why_not_prepared() const;
    const RunDescription& description() const { return m_description; }
    // How long a prepared box has waited since its start (zero before it started).
    MonoClock::duration waiting_for() const
    {
        return m_evidence.box_started ? MonoClock::now() - *m_evidence.box_started : MonoClock::duration::zero();
    }
    std::int64_t expires_at() const { return m_description.box.expires_at; }

    // Names the box (run id, expiry, engine) and sets its command.
    void identify(const std::string& installation_id, std::uint32_t owner_uid, const VerifiedImage& image);
    // Before the attempt is noted: places the run under its own run parent, when it is watched.
    net::awaitable<void> prepare_watch(const Expected<CgroupFacts>& cgroups);
    Expected<void> write_attempt();
    // The client went away: stop waiting for the deadline and kill the box now.
    void cancel();
    // Before execute() or execute_warm(): who is told the run's start and its kept output as it
    // comes (may be null; must outlive the run).
    void observe(RunObserver* observer) { m_observer = observer; }

    // A cold box: create, verify, start, run, remove.
    net::awaitable<void> execute();

    // A warm box: create, verify, start with the first process waiting. False when any step
    // failed; the box is then removed (the failure is kept in the evidence: why_not_prepared()
    // says it) and the BoxRun is done.
    net::awaitable<bool> prepare();
    // Whether a prepared warm box can take a request with `timeout_s` now: the engine reports
    // it running with the settings checked before its start, and it would end (deadline + box
    // timer margin) before its expiry label. Inspects the box once.
    net::awaitable<bool> still_usable(double timeout_s);
    // A prepared warm box takes `request` (same image): from now the run's timings count;
    // `arrived` is when the request reached the daemon, so the time until now was its wait.
    void adopt(proto::RunRequest request, MonoClock::time_point arrived);
    // Delivers the program and runs it, removes the box.
    net::awaitable<void> execute_warm();
    // Removes a warm box that will not be used (unusable, expired, another image wanted, the
    // daemon stopping). Its attempt note goes with it once the removal is confirmed.
    net::awaitable<void> discard();

private:
    class PhaseTimer;

    void note_problem(Problem::Kind kind, Error error);
    // Whether the box timer is given at delivery (warm_box_command) though the box is cold: its
    // engine starts boxes before the program comes (BoxEngine::starts_before_delivery()).
    bool timer_at_delivery() const;
    // Creates, verifies and launches the box; when the engine asks for it once
    // (engine::LaunchFailure::remake), makes it once more (remake_box).
    net::awaitable<bool> make_box();
    // Removes the box the engine asked to make again and confirms it gone (else the launch's
    // failure is the run's, START_FAILED), then creates, verifies and launches a new one.
    net::awaitable<bool> remake_box();
    net::awaitable<bool> create_box();
    net::awaitable<bool> verify_box();
    // The ended box's settings checked again (BoxEngine::check_settings): the effective policy
    // becomes that record, and a mismatch is policy_mismatch_after_run.
    void check_ended_box(const engine::BoxInspection& ended);
    // A failure the engine would remake the box for is kept in m_remake_asked when `may_remake`.
    net::awaitable<bool> launch_box(bool may_remake);
    net::awaitable<void> run_program();
    net::awaitable<void> check_engine_gone(Error inspect_error);
    net::awaitable<void> feed_and_drain();
    net::awaitable<void> wait_for_exit();
    net::awaitable<void> kill_at_deadline();
    net::awaitable<void> find_first_process();
    net::awaitable<void> measure_engine_clock();
    net::awaitable<void> cleanup();
    net::awaitable<void> remove_box();
    void remove_attempt_note();
    // A fresh capture of the box's output, for the request's output limit.
    void reset_output();
    // Tells the observer the bytes kept since it was last told.
    void report_kept_output();

    net::any_io_executor m_executor;
    engine::BoxEngine& m_engine;
    engine::EngineProbe& m_probe;
    const AttemptTracking& m_attempts;
    RunDescription m_description;
    RunEvidence m_evidence;
    engine::BoxSpec m_spec;  // what the box was made from (create_box)
    RunWatch m_watch;
    std::optional<RunsInProgress::Mark> m_in_progress;
    RunObserver* m_observer = nullptr;
    std::size_t m_reported_stdout = 0;  // kept bytes of each stream the observer was told
    std::size_t m_reported_stderr = 0;

    net::steady_timer m_deadline_timer;
    net::steady_timer m_drain_timer;
    std::unique_ptr<engine::BoxStreams> m_streams;  // once launched
    std::unique_ptr<engine::BoxEnd> m_end;
    std::optional<Error> m_wait_error;  // the wait for the exit ended without it
    bool m_exited = false;              // the wait for the exit ended, however
    bool m_create_uncertain = false;    // the create's answer did not say whether a box was made
    std::optional<Error> m_remake_asked;  // why the first launch failed, when the engine would make the box again
    std::optional<std::int64_t> m_first_pid;  // the box's first process on the engine's host, once read
    MonoClock::time_point m_start_asked;      // right before the backend asked for the start
    std::optional<std::string> m_files_marker;  // runs that move files: where the helper's report begins
};

}  // namespace pybox::daemon
