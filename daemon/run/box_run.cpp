#include "daemon/run/box_run.hpp"

#include "common/api_error_codes.hpp"
#include "common/ids.hpp"
#include "common/limits.hpp"
#include "daemon/run/box_removal.hpp"
#include "daemon/run/files_helper.hpp"
#include "daemon/run/files_report.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

namespace pybox::daemon {

using namespace boost::asio::experimental::awaitable_operators;
using proto::KillAnswer;
using std::chrono::milliseconds;
using Kind = Problem::Kind;

namespace {

constexpr auto k_use = net::as_tuple(net::use_awaitable);

std::vector<std::string> mismatched_fields(const engine::SettingsCheck& check)
{
    std::vector<std::string> fields;
    for (const auto& mismatch : check.mismatches) fields.push_back(mismatch.field);
    return fields;
}
// How long output may keep arriving after the engine reported the exit.
constexpr milliseconds k_drain_grace{2'000};

milliseconds to_millis(double seconds) { return milliseconds(static_cast<std::int64_t>(seconds * 1000.0)); }

std::string outcome_of(const Error& error) { return error.code == api_error::k_engine_timeout ? "timeout" : "failed"; }

Problem::Kind launch_problem(engine::LaunchFailure::Step step)
{
    using Step = engine::LaunchFailure::Step;
    switch (step) {
    case Step::streams:
        return Kind::attach_failed;
    case Step::end:
        return Kind::wait_not_registered;
    case Step::start:
        return Kind::start_failed;
    }
    throw std::logic_error("a launch step of no known kind");
}

}  // namespace

// One phase's record in the evidence, from its construction to done().
class BoxRun::PhaseTimer {
public:
    // `budget` names the time budget of the phase in lifecycle.timeouts (the phase's own name
    // unless given: the run phase's budget is the deadline).
    PhaseTimer(BoxRun& run, std::string name, std::string budget = {})
        : m_run(run), m_budget(budget.empty() ? name : std::move(budget)), m_name(std::move(name)),
          m_start(MonoClock::now())
    {
    }
    // The budget fired when the outcome is "timeout", or as `budget_fired` says when the
    // phase also failed otherwise.
    void done(std::string outcome, bool budget_fired = false)
    {
        auto& evidence = m_run.m_evidence;
        if (outcome == "timeout" || budget_fired) evidence.timeouts.push_back(m_budget);
        evidence.phases.push_back(PhaseRecord{m_name, m_start, MonoClock::now(), std::move(outcome)});
    }

private:
    BoxRun& m_run;
    std::string m_budget;
    std::string m_name;
    MonoClock::time_point m_start;
};

BoxRun::BoxRun(net::any_io_executor executor, engine::BoxEngine& engine, engine::EngineProbe& probe,
               const AttemptTracking& attempts,
               proto::RunRequest request, proto::BoxPolicy policy, const WatchSetup& watch,
               BoxKind kind)
    : m_executor(std::move(executor)), m_engine(engine), m_probe(probe), m_attempts(attempts),
      m_watch(watch), m_deadline_timer(m_executor), m_drain_timer(m_executor)
{
    m_description.kind = kind;
    m_description.request = std::move(request);
    m_description.policy = std::move(policy);
    m_evidence.made = MonoClock::now();
    m_evidence.engine_clocks = m_probe.clock_names();
    m_evidence.began = m_evidence.made;
    if (m_description.request.files) m_files_marker = new_files_marker();
    reset_output();
}

BoxRun::~BoxRun() = default;

void BoxRun::reset_output()
{
    m_evidence.output = OutputCapture(m_description.request.output_limit_bytes);
    if (m_files_marker) m_evidence.output.split_stdout_at(*m_files_marker, k_max_files_report_bytes);
    m_reported_stdout = 0;
    m_reported_stderr = 0;
}

void BoxRun::report_kept_output()
{
    if (m_observer == nullptr) return;
    const auto tell = [this](proto::OutputStream stream, const std::string& kept, std::size_t& reported) {
        if (kept.size() == reported) return;
        m_observer->output(stream, std::string_view(kept).substr(reported));
        reported = kept.size();
    };
    tell(proto::OutputStream::stdout_stream, m_evidence.output.stdout_capture().kept, m_reported_stdout);
    tell(proto::OutputStream::stderr_stream, m_evidence.output.stderr_capture().kept, m_reported_stderr);
}

std::optional<std::string> BoxRun::unconfirmed_box() const
{
    const auto& removal = m_evidence.removal;
    if (!removal || removal->all_gone || m_evidence.container_id.empty()) return std::nullopt;
    return m_evidence.container_id;
}

std::string BoxRun::why_not_prepared() const
{
    if (m_evidence.problems.empty()) return "the box could not be prepared";
    return explain_problem(m_evidence.problems.front()).message;
}

void BoxRun::begin_after(MonoClock::time_point arrived)
{
    m_evidence.arrived = arrived;
    m_evidence.began = MonoClock::now();
}

void BoxRun::identify(const std::string& installation_id, std::uint32_t owner_uid, const VerifiedImage& image)
{
    const auto now = WallClock::now();
    auto& box = m_description.box;
    box.installation_id = installation_id;
    box.owner_uid = owner_uid;
    box.run_id = random_id_128();
    box.expires_at = unix_seconds(now) + m_attempts.box_expiry_s;
    m_description.image = image;
    m_description.created_at = rfc3339_utc(now);
    m_description.engine = proto::EngineRef{m_attempts.engine_id, m_engine.describe()};
    m_evidence.engine_unknown = m_engine.always_unknown();
    m_evidence.output_provenance = m_engine.output_provenance();
    const auto& request = m_description.request;
    if (m_description.kind == BoxKind::warm || timer_at_delivery()) {
        m_description.command = proto::warm_box_command();
    } else if (request.files) {
        m_description.command = files_box_command(request.timeout_s);
        m_description.files_helper_sha256 = files_helper_sha256();
    } else {
        m_description.command = proto::box_command(request.timeout_s);
    }
}

net::awaitable<void> BoxRun::prepare_watch(const Expected<CgroupFacts>& cgroups)
{
    auto& box = m_description.box;
    box.cgroup_parent = co_await m_watch.prepare(cgroups, box.installation_id, box.run_id);
}

void BoxRun::cancel()
{
    m_evidence.cancelled = true;
    m_deadline_timer.cancel();
}

Expected<void> BoxRun::write_attempt()
{
    const auto& box = m_description.box;
    AttemptNote note{box.run_id, box.installation_id, m_description.created_at, box.expires_at,
                     m_evidence.container_id, true, m_attempts.engine_id, box.owner_uid};
    auto written = m_attempts.log.write(note);
    if (written && !m_in_progress)
        m_in_progress.emplace(m_attempts.in_progress, box.run_id,
                              m_description.kind == BoxKind::warm ? RunsInProgress::State::warm
                                                                  : RunsInProgress::State::running);
    return written;
}

net::awaitable<void> BoxRun::execute()
{
    const bool ready = co_await make_box();
    if (ready) co_await run_program();
    co_await cleanup();
}

net::awaitable<bool> BoxRun::make_box()
{
    // One co_await per statement: GCC 12 miscompiles co_await inside && and ?:.
    bool ready = co_await create_box();
    if (ready) ready = co_await verify_box();
    if (ready) ready = co_await launch_box(true);
    if (ready || !m_remake_asked) co_return ready;
    co_return co_await remake_box();
}

net::awaitable<bool> BoxRun::remake_box()
{
    PhaseTimer phase(*this, "remove");
    const std::vector<std::string> first{m_evidence.container_id};
    const RemovalOutcome removal = co_await remove_boxes(m_engine, first, limits::k_cleanup_budget);
    Error why = *std::exchange(m_remake_asked, std::nullopt);
    if (!removal.all_gone) {
        // The box stays the run's: the cleanup tries its removal again.
        phase.done(removal.timed_out ? "timeout" : "failed");
        note_problem(Kind::start_failed, std::move(why));
        co_return false;
    }
    phase.done("ok");
    m_evidence.remade = RemadeBox{std::exchange(m_evidence.container_id, {}), std::move(why)};
    m_evidence.effective_policy = nullptr;
    m_evidence.settings_unknown.clear();
    m_evidence.policy_verified = false;
    bool ready = co_await create_box();
    if (ready) ready = co_await verify_box();
    if (ready) ready = co_await launch_box(false);
    co_return ready;
}

net::awaitable<bool> BoxRun::prepare()
{
    const bool ready = co_await make_box();
    if (ready) {
        co_await measure_engine_clock();
        co_await find_first_process();
    } else {
        co_await cleanup();
    }
    co_return ready;
}

net::awaitable<bool> BoxRun::still_usable(double timeout_s)
{
    const double ends_by = static_cast<double>(unix_seconds(WallClock::now())) + timeout_s +
                           limits::k_box_timer_margin_s;
    if (ends_by >= static_cast<double>(m_description.box.expires_at)) co_return false;
    auto inspected = co_await m_engine.inspect_box(m_evidence.container_id, limits::k_inspect_timeout);
    if (!inspected || !inspected->state.running) co_return false;
    // The warm step stays the box's first process (PID 1) for the whole run.
    if (inspected->state.first_pid) m_first_pid = inspected->state.first_pid;
    co_return m_engine.check_settings(m_spec, *inspected).mismatches.empty();
}

void BoxRun::adopt(proto::RunRequest request, MonoClock::time_point arrived)
{
    m_description.request = std::move(request);
    reset_output();
    if (m_in_progress) m_in_progress->taken();
    // The box's making becomes its preparation; the run's own timings start now.
    m_evidence.preparation = std::exchange(m_evidence.phases, {});
    m_evidence.arrived = arrived;
    m_evidence.began = MonoClock::now();
}

net::awaitable<void> BoxRun::execute_warm()
{
    co_await run_program();
    co_await cleanup();
}

net::awaitable<void> BoxRun::discard()
{
    co_await cleanup();
}

bool BoxRun::timer_at_delivery() const
{
    // A run that moves files has its helper as the first process, which keeps its own timer.
    return m_engine.starts_before_delivery() && !m_description.request.files;
}

void BoxRun::note_problem(Kind kind, Error error)
{
    m_evidence.problems.push_back(Problem{kind, std::move(error)});
}

net::awaitable<bool> BoxRun::create_box()
{
    PhaseTimer phase(*this, "create");
    m_spec = make_box_spec(m_description.policy, m_description.image.image_id, m_description.command,
                           m_description.box);
    if (m_description.kind == BoxKind::cold) m_spec.box_timer_s = m_description.guest_timer_s();
    auto created = co_await m_engine.create_box(m_spec, limits::k_create_timeout);
    if (!created) {
        phase.done(outcome_of(created.error()));
        m_create_uncertain = created.error().code == api_error::k_engine_timeout ||
                             created.error().code == api_error::k_engine_protocol;
        note_problem(Kind::create_failed, created.error());
        co_return false;
    }
    m_evidence.container_id = created->id;
    if (auto noted = write_attempt(); !noted) note_problem(Kind::attempt_note_stale, noted.error());
    if (!created->warnings.empty()) {
        phase.done("failed");
        m_evidence.problems.push_back(Problem{Kind::create_warnings, {}, created->warnings});
        co_return false;
    }
    phase.done("ok");
    co_return !m_evidence.cancelled;
}

net::awaitable<bool> BoxRun::verify_box()
{
    PhaseTimer phase(*this, "verify");
    auto inspected = co_await m_engine.inspect_box(m_evidence.container_id, limits::k_inspect_timeout);
    if (!inspected) {
        phase.done(outcome_of(inspected.error()));
        note_problem(Kind::verify_failed, inspected.error());
        co_return false;
    }
    auto check = m_engine.check_settings(m_spec, *inspected);
    m_evidence.effective_policy = std::move(check.record);
    m_evidence.settings_unknown = std::move(check.unknown);
    if (!check.mismatches.empty()) {
        phase.done("failed");
        m_evidence.problems.push_back(Problem{Kind::policy_mismatch, {}, mismatched_fields(check)});
        co_return false;
    }
    m_evidence.policy_verified = true;
    phase.done("ok");
    co_return !m_evidence.cancelled;
}

void BoxRun::check_ended_box(const engine::BoxInspection& ended)
{
    if (!m_evidence.policy_verified) return;
    auto check = m_engine.check_settings(m_spec, ended);
    m_evidence.effective_policy = std::move(check.record);
    m_evidence.settings_unknown = std::move(check.unknown);
    if (!check.mismatches.empty())
        m_evidence.problems.push_back(Problem{Kind::policy_mismatch_after_run, {}, mismatched_fields(check)});
}

net::awaitable<bool> BoxRun::launch_box(bool may_remake)
{
    PhaseTimer phase(*this, "start");
    const auto& id = m_evidence.container_id;
    const double timeout_s = m_description.request.timeout_s;
    const auto start_budget = std::max(limits::k_min_start_timeout, to_millis(timeout_s));
    auto launched = co_await m_engine.launch_box(id, {limits::k_query_timeout, start_budget});
    if (!launched) {
        const auto& failure = launched.error();
        phase.done(outcome_of(failure.error));
        if (failure.remake && may_remake && !m_evidence.cancelled) {
            m_remake_asked = failure.error;
        } else {
            note_problem(launch_problem(failure.step), failure.error);
        }
        co_return false;
    }
    m_streams = std::move(launched->streams);
    m_end = std::move(launched->end);
    m_start_asked = launched->start_asked;
    m_evidence.box_started = MonoClock::now();
    m_evidence.box_started_wall = WallClock::now();
    // A warm box's program and watcher start at delivery (run_program).
    if (m_description.kind == BoxKind::cold) {
        m_evidence.program_started = m_evidence.box_started;
        m_watch.start(m_engine, id, timeout_s);
    }
    phase.done("ok");
    co_return true;
}

net::awaitable<void> BoxRun::run_program()
{
    PhaseTimer phase(*this, "run", "deadline");
    if (m_observer != nullptr) m_observer->started(m_description.box.run_id);
    const double timeout_s = m_description.request.timeout_s;
    // A client gone before the program ran (while the box was created or started) gets its
    // box killed at once: cancel() found no wait on the timer to end then.
    m_deadline_timer.expires_after(m_evidence.cancelled ? milliseconds(0) : to_millis(timeout_s));
    if (m_description.kind == BoxKind::warm) {
        // The engine's clock and the first process were read while the box waited (prepare(),
        // still_usable()): the run makes no engine call but its own.
        m_evidence.program_started = MonoClock::now();
        m_watch.start(m_engine, m_evidence.container_id, timeout_s);
        if (m_first_pid) m_watch.first_process(*m_first_pid, monotonic_ns(m_start_asked));
        co_await (feed_and_drain() && wait_for_exit() && kill_at_deadline());
    } else {
        co_await (feed_and_drain() && wait_for_exit() && kill_at_deadline() && measure_engine_clock() &&
                  find_first_process());
    }
    const auto kill = m_evidence.kill;
    const bool deadline_fired =
        (kill == KillAnswer::accepted || kill == KillAnswer::failed) && !m_evidence.cancelled;
    // The engine lost mid-run (no exit reported) or a broken stream: the phase did not do its job.
    if (!m_evidence.exit_observed || m_evidence.stream_error) {
        phase.done("failed", deadline_fired);
    } else {
        phase.done(deadline_fired ? "timeout" : "ok");
    }

    PhaseTimer inspect(*this, "inspect");
    auto final_state = co_await m_engine.inspect_box(m_evidence.container_id, limits::k_inspect_timeout);
    if (final_state && final_state->raw.is_object()) {
        check_ended_box(*final_state);
        m_evidence.final_state = std::move(final_state->state);
        inspect.done("ok");
    } else {
        inspect.done(final_state ? "failed" : outcome_of(final_state.error()));
        if (!final_state && !m_evidence.exit_observed) co_await check_engine_gone(final_state.error());
    }
}

// The exit was never reported and the final inspect failed: whether the engine still answers
// tells an engine that went away from one that only failed these calls.
net::awaitable<void> BoxRun::check_engine_gone(Error inspect_error)
{
    auto answered = co_await m_probe.answers(limits::k_query_timeout);
    if (answered) co_return;
    m_evidence.engine_gone = EngineGone{std::move(inspect_error), answered.error(), m_wait_error};
}

net::awaitable<void> BoxRun::feed_and_drain()
{
    const auto& request = m_description.request;
    // A warm box's first process (and a cold one's that started before delivery) reads the box
    // timer's value as its first line.
    const std::string timer_line = m_description.kind == BoxKind::warm || timer_at_delivery()
                                       ? proto::warm_box_timer_line(m_description.guest_timer_s())
                                       : std::string();
    const std::string input =
        m_files_marker ? files_helper_input(request, *m_files_marker) : timer_line + request.source;
    auto& stream_error = m_evidence.stream_error;
    auto written = co_await m_streams->write_stdin(input, to_millis(request.timeout_s));
    if (written) {
        (void)m_streams->close_stdin();
    } else {
        stream_error = "writing the program to the box failed: " + written.error().message;
    }
    for (;;) {
        auto chunks = co_await m_streams->read_output();
        if (!chunks) {
            if (!stream_error) stream_error = "the output stream broke: " + chunks.error().message;
            break;
        }
        if (chunks->empty()) {
            m_evidence.stream_ended = true;
            break;
        }
        for (const auto& chunk : *chunks) m_evidence.output.add(chunk);
        report_kept_output();
    }
    m_evidence.output.finish();
    m_evidence.output_malformed = m_streams->malformed();
    m_evidence.environment = m_streams->environment();
    report_kept_output();
    m_drain_timer.cancel();
}

net::awaitable<void> BoxRun::wait_for_exit()
{
    const auto budget = to_millis(m_description.guest_timer_s()) + limits::k_stop_timeout + limits::k_inspect_timeout;
    auto result = co_await m_end->ended(budget);
    m_exited = true;
    m_watch.exit_observed();
    m_deadline_timer.cancel();
    if (result) {
        m_evidence.exit_observed = true;
    } else {
        m_wait_error = result.error();
        note_problem(Kind::wait_failed, result.error());
        if (result.error().code == api_error::k_engine_timeout) m_evidence.timeouts.push_back("wait");
    }
    if (!m_evidence.stream_ended) {
        m_drain_timer.expires_after(k_drain_grace);
        auto [ec] = co_await m_drain_timer.async_wait(k_use);
        if (!ec && !m_evidence.stream_ended) {
            m_evidence.stream_error = "the output stream stayed open after the box exited; PyBox closed it";
            m_streams->cancel();
        }
    }
}

net::awaitable<void> BoxRun::kill_at_deadline()
{
    co_await m_deadline_timer.async_wait(k_use);
    if (m_exited) co_return;
    m_evidence.kill_sent_mono = MonoClock::now();
    m_evidence.kill_sent_unix_ns = unix_nanoseconds(WallClock::now());
    auto killed = co_await m_engine.kill_box(m_evidence.container_id, limits::k_stop_timeout);
    if (!killed) {
        m_evidence.kill = KillAnswer::failed;
        note_problem(Kind::kill_failed, killed.error());
    } else {
        m_evidence.kill = *killed == engine::BoxKillOutcome::killed ? KillAnswer::accepted : KillAnswer::not_running;
    }
}

// Names the box's first process to the watcher: from then on the kernel's record of its end and
// its interpreter's is kept, and the watcher's final reading follows that process's end at once
// instead of the engine's later report (by then the box's cgroup is gone). A warm box's is
// read while it waits (prepare()), a cold box's while its program runs.
net::awaitable<void> BoxRun::find_first_process()
{
    if (!m_watch.wants_first_process()) co_return;
    auto inspected = co_await m_engine.inspect_box(m_evidence.container_id, limits::k_inspect_timeout);
    if (!inspected || !inspected->state.first_pid) co_return;
    m_first_pid = inspected->state.first_pid;
    m_watch.first_process(*m_first_pid, monotonic_ns(m_start_asked));
}

// The offset of the engine's clock from the daemon's (EngineProbe::clock_offset), measured while
// the program runs so that it adds no latency.
net::awaitable<void> BoxRun::measure_engine_clock()
{
    auto offset = co_await m_probe.clock_offset(limits::k_query_timeout);
    if (offset) {
        m_evidence.engine_clock_offset = *offset;
    } else {
        m_evidence.clock_read_failed = offset.error().message;
    }
}

// Removes the box, then collects the watcher's final reading (or what the engine observed of a
// box no watcher ran for) and removes the run parent.
net::awaitable<void> BoxRun::cleanup()
{
    co_await remove_box();
    // A named value, not a conditional's temporary in the co_await's operand: that one was read
    // after it was destroyed in GCC 12's coroutine frame (measured: ASan SEGV in this function).
    std::optional<ResourceObservation> from_engine;
    if (m_end) from_engine = m_end->resources();
    co_await m_watch.finish(std::move(from_engine));
    m_evidence.watch = WatchSummary{m_watch.resources(), m_watch.unknown(), m_watch.oom_kills(),
                                    m_watch.process_ends(), m_watch.process_ends_unread()};
    m_evidence.ended = MonoClock::now();
}

// Removes the box (force), then confirms it is gone; one retry, 15 s in all.
net::awaitable<void> BoxRun::remove_box()
{
    PhaseTimer phase(*this, "remove");
    m_watch.exit_observed();
    if (m_streams) m_streams->cancel();
    if (m_end) m_end->cancel();
    std::vector<std::string> boxes;
    if (!m_evidence.container_id.empty()) {
        boxes.push_back(m_evidence.container_id);
    } else if (m_create_uncertain) {
        const std::vector<std::string> filters{std::string(k_label_run) + "=" + m_description.box.run_id};
        auto listed = co_await m_engine.list_boxes(filters, limits::k_query_timeout);
        if (listed)
            for (const auto& box : *listed) boxes.push_back(box.id);
    }
    if (boxes.empty() && !m_create_uncertain) {
        phase.done("skipped");
        remove_attempt_note();
        co_return;
    }
    const RemovalOutcome removal = co_await remove_boxes(m_engine, boxes, limits::k_cleanup_budget);
    m_evidence.removal = removal;
    if (removal.all_gone) {
        phase.done("ok");
        remove_attempt_note();
    } else {
        phase.done(removal.timed_out ? "timeout" : "failed");
    }
}

void BoxRun::remove_attempt_note()
{
    if (auto removed = m_attempts.log.remove(m_description.box.run_id); !removed)
        m_evidence.note_not_removed = removed.error().message;
}

}  // namespace pybox::daemon
