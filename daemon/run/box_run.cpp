#include "daemon/run/box_run.hpp"

#include "common/ids.hpp"
#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "common/version.hpp"
#include "daemon/run/box_removal.hpp"
#include "daemon/run/capture_record.hpp"
#include "daemon/run/engine_clock.hpp"
#include "daemon/run/files_helper.hpp"
#include "daemon/run/files_report.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>

#include <algorithm>
#include <chrono>

namespace pybox::daemon {

using namespace boost::asio::experimental::awaitable_operators;
using proto::CleanupStatus;
using proto::explain;
using proto::TerminationMechanism;
using std::chrono::milliseconds;

namespace {

constexpr auto k_use = net::as_tuple(net::use_awaitable);
// How long output may keep arriving after the engine reported the exit.
constexpr milliseconds k_drain_grace{2'000};

milliseconds to_millis(double seconds) { return milliseconds(static_cast<std::int64_t>(seconds * 1000.0)); }

json::object error_evidence(const Error& error) { return {{"code", error.code}, {"message", error.message}}; }

std::string outcome_of(const Error& error) { return error.code == "engine_timeout" ? "timeout" : "failed"; }

// The WAIT_FAILED sentence for a wait that ended without the box's exit, by what ended it.
std::string wait_failure_sentence(const Error& error)
{
    if (error.code == "engine_timeout") return "The engine did not report the box's exit in time.";
    if (error.code == "engine_protocol")
        return "The connection waiting for the box's exit broke or carried a malformed answer before the engine "
               "reported the exit.";
    if (error.code == "cancelled") return "PyBox stopped waiting for the box's exit.";
    return "The engine answered the wait with an error instead of the box's exit.";
}

}  // namespace

class BoxRun::PhaseTimer {
public:
    // `budget` names the time budget of the phase in lifecycle.timeouts (the phase's own name
    // unless given: the run phase's budget is the deadline).
    PhaseTimer(BoxRun& run, std::string name, std::string budget = {})
        : m_run(run), m_budget(budget.empty() ? name : std::move(budget)), m_start(MonoClock::now())
    {
        m_run.m_receipt.lifecycle.last_phase = name;
        m_name = std::move(name);
    }
    // The budget fired when the outcome is "timeout", or as `budget_fired` says when the
    // phase also failed otherwise.
    void done(std::string outcome, bool budget_fired = false)
    {
        const auto now = MonoClock::now();
        m_run.m_receipt.lifecycle.phases.push_back(proto::Phase{
            m_name, seconds_between(m_run.m_started, m_start), seconds_between(m_start, now), outcome});
        if (outcome == "timeout" || budget_fired) m_run.m_receipt.lifecycle.timeouts.push_back(m_budget);
    }

private:
    BoxRun& m_run;
    std::string m_name;
    std::string m_budget;
    MonoClock::time_point m_start;
};

BoxRun::BoxRun(net::any_io_executor executor, engine::BoxEngine& engine, const AttemptTracking& attempts,
               proto::RunRequest request, proto::BoxPolicy policy, BoxRuntime runtime, const WatchSetup& watch,
               BoxKind kind)
    : m_executor(std::move(executor)), m_engine(engine), m_attempts(attempts), m_kind(kind),
      m_request(std::move(request)), m_policy(std::move(policy)), m_runtime(std::move(runtime)), m_watch(watch),
      m_deadline_timer(m_executor), m_drain_timer(m_executor), m_demuxer(m_request.output_limit_bytes),
      m_started(MonoClock::now())
{
    if (m_request.files) {
        m_files_marker = new_files_marker();
        m_demuxer.split_stdout_at(*m_files_marker, k_max_files_report_bytes);
    }
    m_receipt.lifecycle.warm = m_kind == BoxKind::warm;
    m_receipt.identity.daemon_version = pybox::version();
}

BoxRun::~BoxRun() = default;

void BoxRun::begin_after(MonoClock::time_point arrived)
{
    const auto now = MonoClock::now();
    m_receipt.lifecycle.queued_s = seconds_between(arrived, now);
    m_started = now;
}

void BoxRun::identify(const std::string& installation_id, std::uint32_t owner_uid, const VerifiedImage& image)
{
    const auto now = WallClock::now();
    m_box.installation_id = installation_id;
    m_box.owner_uid = owner_uid;
    m_box.run_id = random_id_128();
    m_box.expires_at = unix_seconds(now) + m_attempts.box_expiry_s;

    auto& identity = m_receipt.identity;
    identity.run_id = m_box.run_id;
    identity.installation_id = installation_id;
    identity.image = m_request.image;
    identity.image_id = image.image_id;
    identity.recipe_sha256 = image.recipe_sha256;
    identity.created_at = rfc3339_utc(now);
    identity.expires_at = m_box.expires_at;
    m_receipt.engine = proto::EngineRef{m_attempts.engine_id, m_engine.describe()};
    m_receipt.configured.policy = m_policy;
    if (m_kind == BoxKind::warm) {
        m_receipt.configured.command = proto::warm_box_command();
    } else if (m_request.files) {
        m_receipt.configured.command = files_box_command(m_request.timeout_s);
        m_receipt.configured.files_helper_sha256 = files_helper_sha256();
    } else {
        m_receipt.configured.command = proto::box_command(m_request.timeout_s);
    }
    set_request_configuration();
}

// What the receipt records of the request itself: the program's digest and size, the deadline,
// the box timer and the output limit.
void BoxRun::set_request_configuration()
{
    m_receipt.source_sha256 = sha256_hex(m_request.source);
    m_receipt.source_bytes = m_request.source.size();
    auto& configured = m_receipt.configured;
    configured.wall_timeout_s = m_request.timeout_s;
    configured.guest_timer_s = m_request.timeout_s + limits::k_box_timer_margin_s;
    configured.output_limit_bytes = static_cast<std::int64_t>(m_request.output_limit_bytes);
}

net::awaitable<void> BoxRun::prepare_watch(const Expected<CgroupFacts>& cgroups)
{
    m_box.cgroup_parent = co_await m_watch.prepare(cgroups, m_box.installation_id, m_box.run_id);
}

void BoxRun::cancel()
{
    m_cancelled = true;
    m_deadline_timer.cancel();
}

Expected<void> BoxRun::write_attempt()
{
    AttemptNote note{m_box.run_id, m_box.installation_id, m_receipt.identity.created_at, m_box.expires_at,
                     m_receipt.container_id, true, m_attempts.engine_id, m_box.owner_uid};
    auto written = m_attempts.log.write(note);
    if (written && !m_in_progress)
        m_in_progress.emplace(m_attempts.in_progress, m_box.run_id,
                              m_kind == BoxKind::warm ? RunsInProgress::State::warm : RunsInProgress::State::running);
    return written;
}

net::awaitable<void> BoxRun::execute()
{
    // One co_await per statement: GCC 12 miscompiles co_await inside && and ?:.
    bool ready = co_await create_box();
    if (ready) ready = co_await verify_box();
    if (ready) ready = co_await start_box();
    if (ready) co_await run_program();
    co_await cleanup();
    finish();
}

net::awaitable<bool> BoxRun::prepare()
{
    bool ready = co_await create_box();
    if (ready) ready = co_await verify_box();
    if (ready) ready = co_await start_box();
    if (ready) {
        co_await measure_engine_clock();
    } else {
        co_await cleanup();
    }
    co_return ready;
}

net::awaitable<bool> BoxRun::still_usable(double timeout_s)
{
    const double ends_by = static_cast<double>(unix_seconds(WallClock::now())) + timeout_s +
                           limits::k_box_timer_margin_s;
    if (ends_by >= static_cast<double>(m_box.expires_at)) co_return false;
    auto inspected = co_await m_engine.inspect_box(m_receipt.container_id, limits::k_inspect_timeout);
    if (!inspected || !inspected->state.running) co_return false;
    // The warm step stays the box's first process (PID 1) for the whole run.
    if (inspected->state.first_pid) m_first_pid = inspected->state.first_pid;
    co_return m_engine.check_settings(m_spec, *inspected).mismatches.empty();
}

void BoxRun::adopt(proto::RunRequest request, MonoClock::time_point arrived)
{
    m_request = std::move(request);
    m_demuxer = engine::StreamDemuxer(m_request.output_limit_bytes);
    set_request_configuration();
    if (m_in_progress) m_in_progress->taken();
    // The box's making becomes its preparation; the run's own timings start now.
    const auto now = MonoClock::now();
    auto& lifecycle = m_receipt.lifecycle;
    proto::Preparation preparation;
    preparation.phases = std::move(lifecycle.phases);
    preparation.total_s = m_box_started ? seconds_between(m_started, *m_box_started) : 0.0;
    preparation.waited_s = m_box_started ? seconds_between(*m_box_started, now) : 0.0;
    lifecycle.preparation = std::move(preparation);
    lifecycle.phases.clear();
    lifecycle.queued_s = seconds_between(arrived, now);
    m_started = now;
}

net::awaitable<void> BoxRun::execute_warm()
{
    co_await run_program();
    co_await cleanup();
    finish();
}

net::awaitable<void> BoxRun::discard()
{
    co_await cleanup();
}

void BoxRun::note_engine_failure(std::string code, std::string message, const Error& error)
{
    m_receipt.explanations.push_back(explain(std::move(code), std::move(message), error_evidence(error)));
}

net::awaitable<bool> BoxRun::create_box()
{
    PhaseTimer phase(*this, "create");
    m_spec = make_box_spec(m_policy, m_runtime, m_receipt.identity.image_id, m_receipt.configured.command, m_box);
    auto created = co_await m_engine.create_box(m_spec, limits::k_create_timeout);
    if (!created) {
        phase.done(outcome_of(created.error()));
        note_engine_failure("CREATE_FAILED", "The engine did not create the box; the program never ran.",
                            created.error());
        m_create_uncertain = created.error().code == "engine_timeout" ||
                             created.error().code == "engine_protocol";
        co_return false;
    }
    m_receipt.container_id = created->id;
    if (auto noted = write_attempt(); !noted)
        m_receipt.explanations.push_back(explain(
            "ATTEMPT_NOTE_STALE",
            "PyBox could not write the box's container ID into the run's attempt note; had the daemon "
            "stopped mid-run, its sweep would still have found the box by its labels.",
            error_evidence(noted.error())));
    if (!created->warnings.empty()) {
        phase.done("failed");
        json::array warnings;
        for (const auto& warning : created->warnings) warnings.emplace_back(warning);
        m_receipt.explanations.push_back(explain(
            "CREATE_WARNINGS", "The engine created the box with warnings, so its settings are not exactly "
                               "the ones PyBox asked for; the box was removed without starting.",
            {{"warnings", std::move(warnings)}}));
        co_return false;
    }
    phase.done("ok");
    co_return !m_cancelled;
}

net::awaitable<bool> BoxRun::verify_box()
{
    PhaseTimer phase(*this, "verify");
    auto inspected = co_await m_engine.inspect_box(m_receipt.container_id, limits::k_inspect_timeout);
    if (!inspected) {
        phase.done(outcome_of(inspected.error()));
        note_engine_failure("VERIFY_FAILED", "The box's settings could not be read back, so it was not started.",
                            inspected.error());
        co_return false;
    }
    auto check = m_engine.check_settings(m_spec, *inspected);
    m_receipt.observed.effective_policy = std::move(check.record);
    if (!check.mismatches.empty()) {
        phase.done("failed");
        json::array fields;
        for (const auto& mismatch : check.mismatches) fields.emplace_back(mismatch.field);
        m_receipt.explanations.push_back(explain(
            "POLICY_MISMATCH", "The engine's effective settings differ from the box policy; the box was "
                               "removed without starting.",
            {{"fields", std::move(fields)}}));
        co_return false;
    }
    m_receipt.observed.policy_verified_before_start = true;
    phase.done("ok");
    co_return !m_cancelled;
}

net::awaitable<bool> BoxRun::start_box()
{
    PhaseTimer phase(*this, "start");
    const auto& id = m_receipt.container_id;
    auto attached = co_await m_engine.attach(id, limits::k_query_timeout);
    if (!attached) {
        phase.done(outcome_of(attached.error()));
        note_engine_failure("ATTACH_FAILED", "PyBox could not attach to the box; it was not started.",
                            attached.error());
        co_return false;
    }
    m_attach = std::move(*attached);
    auto waiting = co_await m_engine.begin_wait(id, limits::k_query_timeout);
    if (!waiting) {
        phase.done(outcome_of(waiting.error()));
        note_engine_failure("WAIT_FAILED", "PyBox could not register for the box's exit; it was not started.",
                            waiting.error());
        co_return false;
    }
    m_wait = std::move(*waiting);
    const auto start_budget = std::max(limits::k_min_start_timeout, to_millis(m_request.timeout_s));
    auto started = co_await m_engine.start_box(id, start_budget);
    if (!started) {
        phase.done(outcome_of(started.error()));
        note_engine_failure("START_FAILED", "The engine did not start the box.", started.error());
        co_return false;
    }
    m_box_started = MonoClock::now();
    m_receipt.lifecycle.box_started_at = rfc3339_utc(WallClock::now());
    // A warm box's program and watcher start at delivery (run_program).
    if (m_kind == BoxKind::cold) {
        m_run_started = m_box_started;
        m_watch.start(id, m_request.timeout_s);
    }
    phase.done("ok");
    co_return true;
}

net::awaitable<void> BoxRun::run_program()
{
    PhaseTimer phase(*this, "run", "deadline");
    // A client gone before the program ran (while the box was created or started) gets its
    // box killed at once: cancel() found no wait on the timer to end then.
    m_deadline_timer.expires_after(m_cancelled ? milliseconds(0) : to_millis(m_request.timeout_s));
    if (m_kind == BoxKind::warm) {
        // The engine's clock and the first process were read while the box waited (prepare(),
        // still_usable()): the run makes no engine call but its own.
        m_run_started = MonoClock::now();
        m_watch.start(m_receipt.container_id, m_request.timeout_s);
        if (m_first_pid) m_watch.first_process(*m_first_pid);
        co_await (feed_and_drain() && wait_for_exit() && kill_at_deadline());
    } else {
        co_await (feed_and_drain() && wait_for_exit() && kill_at_deadline() && measure_engine_clock() &&
                  find_first_process());
    }
    const bool deadline_fired = (m_kill == KillAnswer::accepted || m_kill == KillAnswer::failed) && !m_cancelled;
    // The engine lost mid-run (no exit reported) or a broken stream: the phase did not do its job.
    if (!m_wait_observed_exit || m_stream_error) {
        phase.done("failed", deadline_fired);
    } else {
        phase.done(deadline_fired ? "timeout" : "ok");
    }

    PhaseTimer inspect(*this, "inspect");
    auto final_state = co_await m_engine.inspect_box(m_receipt.container_id, limits::k_inspect_timeout);
    if (final_state && final_state->raw.is_object()) {
        m_final_state = std::move(final_state->state);
        m_receipt.observed.engine_state = m_final_state->raw;
        inspect.done("ok");
    } else {
        inspect.done(final_state ? "failed" : outcome_of(final_state.error()));
        if (!final_state && !m_wait_observed_exit) co_await check_engine_gone(final_state.error());
    }
}

// The exit was never reported and the final inspect failed: a ping tells an engine that went
// away from one that only failed these calls.
net::awaitable<void> BoxRun::check_engine_gone(const Error& inspect_error)
{
    auto pinged = co_await m_engine.ping(limits::k_query_timeout);
    if (pinged) co_return;
    json::object evidence{{"final_inspect", error_evidence(inspect_error)}, {"ping", error_evidence(pinged.error())}};
    if (m_wait_error) evidence["wait"] = error_evidence(*m_wait_error);
    m_engine_gone = std::move(evidence);
}

net::awaitable<void> BoxRun::feed_and_drain()
{
    // A warm box's first process reads the box timer's value as its first line.
    const std::string timer_line =
        m_kind == BoxKind::warm ? proto::warm_box_timer_line(m_receipt.configured.guest_timer_s) : std::string();
    const std::string input =
        m_files_marker ? files_helper_input(m_request, *m_files_marker) : timer_line + m_request.source;
    auto written = co_await m_attach->write_stdin(input, to_millis(m_request.timeout_s));
    if (written) {
        (void)m_attach->close_stdin();
    } else {
        m_stream_error = "writing the program to the box failed: " + written.error().message;
    }
    for (;;) {
        auto chunk = co_await m_attach->read_some();
        if (!chunk) {
            if (!m_stream_error) m_stream_error = "the output stream broke: " + chunk.error().message;
            break;
        }
        if (chunk->empty()) {
            m_stream_ended = true;
            break;
        }
        m_demuxer.feed(*chunk);
    }
    m_demuxer.finish();
    m_drain_timer.cancel();
}

net::awaitable<void> BoxRun::wait_for_exit()
{
    const auto budget = to_millis(m_request.timeout_s + limits::k_box_timer_margin_s) +
                        limits::k_stop_timeout + limits::k_inspect_timeout;
    auto result = co_await m_wait->result(budget);
    m_exited = true;
    m_watch.exit_observed();
    m_deadline_timer.cancel();
    if (result) {
        m_wait_observed_exit = true;
    } else {
        m_wait_error = result.error();
        note_engine_failure("WAIT_FAILED", wait_failure_sentence(result.error()), result.error());
        if (result.error().code == "engine_timeout") m_receipt.lifecycle.timeouts.push_back("wait");
    }
    if (!m_stream_ended) {
        m_drain_timer.expires_after(k_drain_grace);
        auto [ec] = co_await m_drain_timer.async_wait(k_use);
        if (!ec && !m_stream_ended) {
            m_stream_error = "the output stream stayed open after the box exited; PyBox closed it";
            m_attach->cancel();
        }
    }
}

net::awaitable<void> BoxRun::kill_at_deadline()
{
    co_await m_deadline_timer.async_wait(k_use);
    if (m_exited) co_return;
    m_kill_sent_unix_ns = unix_nanoseconds(WallClock::now());
    auto killed = co_await m_engine.kill_box(m_receipt.container_id, limits::k_stop_timeout);
    if (!killed) {
        m_kill = KillAnswer::failed;
        note_engine_failure("KILL_FAILED", "PyBox's kill request at the deadline failed.", killed.error());
    } else {
        m_kill = *killed == engine::KillOutcome::killed ? KillAnswer::accepted : KillAnswer::not_running;
    }
}

// The offset of the engine's clock from the daemon's (engine_clock.hpp), measured while the
// program runs so that it adds no latency.
// Names the box's first process to the watcher, so its final reading follows that process's
// end at once instead of the engine's later report (by then the box's cgroup is gone).
net::awaitable<void> BoxRun::find_first_process()
{
    if (!m_watch.watching()) co_return;
    auto inspected = co_await m_engine.inspect_box(m_receipt.container_id, limits::k_inspect_timeout);
    if (inspected && inspected->state.first_pid) m_watch.first_process(*inspected->state.first_pid);
}

net::awaitable<void> BoxRun::measure_engine_clock()
{
    const std::int64_t before_ns = unix_nanoseconds(WallClock::now());
    auto info = co_await m_engine.info(limits::k_query_timeout);
    const std::int64_t after_ns = unix_nanoseconds(WallClock::now());
    if (!info) {
        m_clock_unmeasured = "GET /info failed: " + info.error().message;
        co_return;
    }
    auto offset = engine_clock_offset(before_ns, *info, after_ns);
    if (offset) {
        m_receipt.clock_domains.engine_offset = *offset;
    } else {
        m_clock_unmeasured = offset.error().message;
    }
}

// Removes the box, then collects the watcher's final reading and removes the run parent.
net::awaitable<void> BoxRun::cleanup()
{
    co_await remove_box();
    co_await m_watch.finish();
}

// Removes the box (force), then confirms it is gone; one retry, 15 s in all.
net::awaitable<void> BoxRun::remove_box()
{
    PhaseTimer phase(*this, "remove");
    m_watch.exit_observed();
    if (m_attach) m_attach->cancel();
    if (m_wait) m_wait->cancel();
    auto& cleanup = m_receipt.cleanup;
    std::vector<std::string> boxes;
    if (!m_receipt.container_id.empty()) {
        boxes.push_back(m_receipt.container_id);
    } else if (m_create_uncertain) {
        const std::vector<std::string> filters{std::string(k_label_run) + "=" + m_box.run_id};
        auto listed = co_await m_engine.list_boxes(filters, limits::k_query_timeout);
        if (listed)
            for (const auto& box : *listed) boxes.push_back(box.id);
    }
    if (boxes.empty() && !m_create_uncertain) {
        cleanup.status = CleanupStatus::not_created;
        phase.done("skipped");
        if (auto removed = m_attempts.log.remove(m_box.run_id); !removed) cleanup.error = removed.error().message;
        co_return;
    }
    const RemovalOutcome removal = co_await remove_boxes(m_engine, boxes, limits::k_cleanup_budget);
    cleanup.attempts = removal.attempts;
    cleanup.error = removal.error;
    cleanup.removed = removal.all_gone;
    if (removal.all_gone) {
        cleanup.status = CleanupStatus::removed;
        phase.done("ok");
        if (auto removed = m_attempts.log.remove(m_box.run_id); !removed) cleanup.error = removed.error().message;
    } else {
        cleanup.status = CleanupStatus::removal_unconfirmed;
        phase.done(removal.timed_out ? "timeout" : "failed");
        m_receipt.explanations.push_back(explain(
            "REMOVAL_UNCONFIRMED",
            "PyBox could not confirm that the box is gone; the daemon removes it before its next run once the "
            "engine answers, or the sweep after its expiry.",
            {{"expires_at", m_box.expires_at}, {"error", cleanup.error.value_or(std::string())}}));
    }
}

void BoxRun::finish()
{
    auto& receipt = m_receipt;
    const bool started = m_run_started.has_value();
    if (started) {
        EndEvidence evidence;
        evidence.engine_state = m_final_state ? &*m_final_state : nullptr;
        evidence.kill = m_kill;
        evidence.kill_sent_unix_ns = m_kill_sent_unix_ns;
        evidence.engine_clock_offset = receipt.clock_domains.engine_offset;
        evidence.wall_timeout_s = receipt.configured.wall_timeout_s;
        evidence.guest_timer_s = receipt.configured.guest_timer_s;
        if (m_box_started) evidence.timer_delay_s = seconds_between(*m_box_started, *m_run_started);
        evidence.client_gone = m_cancelled;
        evidence.kernel_oom_kills = m_watch.oom_kills();
        const EndVerdict verdict = classify_end(evidence);
        receipt.observed.termination = verdict.termination;
        for (const auto& explanation : verdict.explanations) receipt.explanations.push_back(explanation);
        for (const auto& [key, why] : verdict.unknown) receipt.unknown[key] = why;
    } else {
        receipt.observed.termination.mechanism = TerminationMechanism::not_started;
    }
    if (m_engine_gone)
        receipt.explanations.push_back(explain(
            "ENGINE_GONE",
            "The engine went away mid-run: it stopped answering before it reported the box's exit, so the "
            "program's end and exit code were not observed, its output is incomplete, and the box's removal "
            "is not confirmed. Without the engine the box timer (the deadline + " +
                std::to_string(static_cast<int>(limits::k_box_timer_margin_s)) +
                " s) still ends the program; once the engine answers again PyBox removes the box before its "
                "next run.",
            *m_engine_gone));
    if (!receipt.clock_domains.engine_offset) receipt.unknown["absolute_clock_alignment"] = m_clock_unmeasured;
    receipt.observed.resources = m_watch.resources();
    for (const auto& [key, why] : m_watch.unknown()) receipt.unknown[key] = why;
    if (m_cancelled) {
        receipt.lifecycle.cancelled = true;
        receipt.explanations.push_back(explain("CLIENT_DISCONNECTED",
                                               "The client went away, so PyBox stopped the run and removed the box."));
    }

    record_capture({m_demuxer, started, m_wait_observed_exit, m_stream_ended, m_stream_error,
                    m_request.output_limit_bytes},
                   receipt);
    if (m_request.files) record_files();
    receipt.lifecycle.total_s = seconds_between(m_started, MonoClock::now());
}

// The receipt's `files` and the files to return, from the helper's report.
void BoxRun::record_files()
{
    FilesReportEvidence evidence;
    const auto& split = m_demuxer.stdout_split();
    if (split && split->found()) {
        evidence.report = split->tail();
        evidence.report_truncated = split->tail_truncated();
    }
    FilesOutcome outcome = read_files_report(evidence, *m_request.files, why_no_files_report());
    m_receipt.files = std::move(outcome.record);
    m_output_files = std::move(outcome.outputs);
    const auto& files = *m_receipt.files;
    if (!files.errors.empty())
        m_receipt.explanations.push_back(explain("FILES_NOT_RETURNED", files.errors.front(),
                                                 {{"errors", static_cast<std::uint64_t>(files.errors.size())}}));
    if (!files.skipped.empty() || files.skipped_unlisted > 0)
        m_receipt.explanations.push_back(explain(
            "FILES_SKIPPED",
            "Some of what the program left in the output folder did not come back (files.skipped says why).",
            {{"listed", static_cast<std::uint64_t>(files.skipped.size())}, {"unlisted", files.skipped_unlisted}}));
}

std::string BoxRun::why_no_files_report() const
{
    using proto::TerminationMechanism;
    const std::string kept = "; no output file was kept.";
    if (!m_run_started) return "The program never started" + kept;
    switch (m_receipt.observed.termination.mechanism) {
    case TerminationMechanism::deadline_kill:
    case TerminationMechanism::cause_not_established:
        return "The box was killed at the deadline before the files helper reported" + kept;
    case TerminationMechanism::out_of_memory:
        return "The box ran out of memory before the files helper reported" + kept;
    case TerminationMechanism::stopped_on_disconnect:
        return "The client went away, so the box was stopped before the files helper reported" + kept;
    default:
        return "The files helper ended without its report (it was killed, or failed: see stderr)" + kept;
    }
}


}  // namespace pybox::daemon
