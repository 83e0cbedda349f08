#include "daemon/run/sealed_run.hpp"

#include "common/clock.hpp"
#include "common/ids.hpp"
#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "daemon/engine/stream_demuxer.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/run/policy_check.hpp"
#include "daemon/run/termination.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>

#include <algorithm>
#include <chrono>

namespace pybox::daemon {

using namespace boost::asio::experimental::awaitable_operators;
using proto::CleanupStatus;
using proto::TerminationMechanism;
using std::chrono::milliseconds;

namespace {

constexpr auto k_use = net::as_tuple(net::use_awaitable);
// How long output may keep arriving after the engine reported the exit.
constexpr milliseconds k_drain_grace{2'000};

milliseconds to_millis(double seconds) { return milliseconds(static_cast<std::int64_t>(seconds * 1000.0)); }

proto::Explanation explain(std::string code, std::string message, json::object evidence = {})
{
    return proto::Explanation{std::move(code), std::move(message), std::move(evidence)};
}

json::object error_evidence(const Error& error) { return {{"code", error.code}, {"message", error.message}}; }

// Errors that stop a run before anything is created: an unreachable engine says how to start it,
// whichever call found it gone.
Error with_engine_hint(Error error)
{
    if (error.code == "engine_unreachable") error.message += " Is the engine running? Start it with: pybox vm start";
    return error;
}

// The state of one run: what was asked, what has been observed so far, and the receipt being
// filled in. Lives in the run() coroutine frame; the phase coroutines borrow it.
class RunContext {
public:
    RunContext(net::any_io_executor executor, engine::EngineClient& engine, const AttemptLog& attempts,
               proto::RunRequest request, proto::BoxPolicy policy, BoxRuntime runtime)
        : m_executor(std::move(executor)), m_engine(engine), m_attempts(attempts),
          m_request(std::move(request)), m_policy(std::move(policy)), m_runtime(std::move(runtime)), m_deadline_timer(m_executor),
          m_drain_timer(m_executor), m_demuxer(m_request.output_limit_bytes), m_started(MonoClock::now())
    {
    }

    proto::Receipt& receipt() { return m_receipt; }
    bool cancelled() const { return m_cancelled; }

    void identify(const std::string& installation_id, const VerifiedImage& image)
    {
        const auto now = WallClock::now();
        m_box.installation_id = installation_id;
        m_box.run_id = random_id_128();
        m_box.expires_at = unix_seconds(now) + limits::k_box_expiry_s;

        auto& identity = m_receipt.identity;
        identity.run_id = m_box.run_id;
        identity.installation_id = installation_id;
        identity.image = m_request.image;
        identity.image_id = image.image_id;
        identity.recipe_sha256 = image.recipe_sha256;
        identity.created_at = rfc3339_utc(now);
        identity.expires_at = m_box.expires_at;
        m_receipt.source_sha256 = sha256_hex(m_request.source);
        m_receipt.source_bytes = m_request.source.size();

        auto& configured = m_receipt.configured;
        configured.wall_timeout_s = m_request.timeout_s;
        configured.guest_timer_s = m_request.timeout_s + limits::k_box_timer_margin_s;
        configured.output_limit_bytes = static_cast<std::int64_t>(m_request.output_limit_bytes);
        configured.policy = m_policy;
        configured.command = proto::box_command(m_request.timeout_s);
        m_receipt.observed.resources = json::object{
            {"status", "UNKNOWN"},
            {"reason", "this version has no kernel watcher; no cgroup counters were read"}};
        m_receipt.unknown["final_resource_counters"] =
            "this version has no kernel watcher; memory, CPU and pids counters were not read";
        m_receipt.unknown["absolute_clock_alignment"] =
            "engine timestamps use the engine's clock; its offset from the host clock is not measured";
    }

    // The client went away: stop waiting for the deadline and kill the box now.
    void cancel()
    {
        m_cancelled = true;
        m_deadline_timer.cancel();
    }

    Expected<void> write_attempt()
    {
        AttemptNote note{m_box.run_id, m_box.installation_id, m_receipt.identity.created_at, m_box.expires_at,
                         m_receipt.container_id};
        return m_attempts.write(note);
    }

    net::awaitable<void> execute()
    {
        // One co_await per statement: GCC 12 miscompiles co_await inside && and ?:.
        bool ready = co_await create_box();
        if (ready) ready = co_await verify_box();
        if (ready) ready = co_await start_box();
        if (ready) co_await run_program();
        co_await cleanup();
        finish();
    }

private:
    class PhaseTimer {
    public:
        PhaseTimer(RunContext& run, std::string name) : m_run(run), m_start(MonoClock::now())
        {
            m_run.m_receipt.lifecycle.last_phase = name;
            m_name = std::move(name);
        }
        void done(std::string outcome)
        {
            const auto now = MonoClock::now();
            m_run.m_receipt.lifecycle.phases.push_back(proto::Phase{
                m_name, seconds_between(m_run.m_started, m_start), seconds_between(m_start, now), outcome});
            if (outcome == "timeout") m_run.m_receipt.lifecycle.timeouts.push_back(m_name);
        }

    private:
        RunContext& m_run;
        std::string m_name;
        MonoClock::time_point m_start;
    };

    static std::string outcome_of(const Error& error) { return error.code == "engine_timeout" ? "timeout" : "failed"; }

    void note_engine_failure(std::string code, std::string message, const Error& error)
    {
        m_receipt.explanations.push_back(explain(std::move(code), std::move(message), error_evidence(error)));
    }

    net::awaitable<bool> create_box()
    {
        PhaseTimer phase(*this, "create");
        const json::object spec = make_box_spec(m_policy, m_runtime, m_receipt.identity.image_id,
                                                m_receipt.configured.command, m_box);
        auto created = co_await m_engine.create_container(spec, "pybox-" + m_box.run_id, limits::k_create_timeout);
        if (!created) {
            phase.done(outcome_of(created.error()));
            note_engine_failure("CREATE_FAILED", "The engine did not create the box; the program never ran.",
                                created.error());
            m_create_uncertain = created.error().code == "engine_timeout" ||
                                 created.error().code == "engine_protocol";
            co_return false;
        }
        m_receipt.container_id = created->id;
        (void)write_attempt();
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

    net::awaitable<bool> verify_box()
    {
        PhaseTimer phase(*this, "verify");
        auto inspected = co_await m_engine.inspect_container(m_receipt.container_id, limits::k_inspect_timeout);
        if (!inspected) {
            phase.done(outcome_of(inspected.error()));
            note_engine_failure("VERIFY_FAILED", "The box's settings could not be read back, so it was not started.",
                                inspected.error());
            co_return false;
        }
        const auto mismatches = check_effective_policy(m_policy, m_runtime, m_box, *inspected);
        m_receipt.observed.effective_policy = effective_policy_record(*inspected, mismatches);
        if (!mismatches.empty()) {
            phase.done("failed");
            json::array fields;
            for (const auto& mismatch : mismatches) fields.emplace_back(mismatch.field);
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

    net::awaitable<bool> start_box()
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
        auto started = co_await m_engine.start_container(id, start_budget);
        if (!started) {
            phase.done(outcome_of(started.error()));
            note_engine_failure("START_FAILED", "The engine did not start the box.", started.error());
            co_return false;
        }
        m_run_started = MonoClock::now();
        phase.done("ok");
        co_return true;
    }

    net::awaitable<void> run_program()
    {
        PhaseTimer phase(*this, "run");
        m_deadline_timer.expires_after(to_millis(m_request.timeout_s));
        if (m_cancelled) m_deadline_timer.cancel();
        co_await (feed_and_drain() && wait_for_exit() && kill_at_deadline());
        phase.done(m_kill == KillAnswer::accepted ? "timeout" : "ok");
        if ((m_kill == KillAnswer::accepted || m_kill == KillAnswer::failed) && !m_cancelled)
            m_receipt.lifecycle.timeouts.push_back("deadline");

        PhaseTimer inspect(*this, "inspect");
        auto final_state = co_await m_engine.inspect_container(m_receipt.container_id, limits::k_inspect_timeout);
        if (final_state && final_state->is_object()) {
            if (const auto* state = final_state->as_object().if_contains("State")) m_receipt.observed.engine_state = *state;
            inspect.done("ok");
        } else {
            inspect.done(final_state ? "failed" : outcome_of(final_state.error()));
        }
    }

    net::awaitable<void> feed_and_drain()
    {
        auto written = co_await m_attach->write_stdin(m_request.source, to_millis(m_request.timeout_s));
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

    net::awaitable<void> wait_for_exit()
    {
        const auto budget = to_millis(m_request.timeout_s + limits::k_box_timer_margin_s) +
                            limits::k_stop_timeout + limits::k_inspect_timeout;
        auto result = co_await m_wait->result(budget);
        m_exited = true;
        m_deadline_timer.cancel();
        if (result) {
            m_wait_observed_exit = true;
        } else {
            note_engine_failure("WAIT_FAILED", "The engine did not report the box's exit in time.", result.error());
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

    net::awaitable<void> kill_at_deadline()
    {
        co_await m_deadline_timer.async_wait(k_use);
        if (m_exited) co_return;
        auto killed = co_await m_engine.kill_container(m_receipt.container_id, "KILL", limits::k_stop_timeout);
        if (!killed) {
            m_kill = KillAnswer::failed;
            note_engine_failure("KILL_FAILED", "PyBox's kill request at the deadline failed.", killed.error());
        } else {
            m_kill = *killed == engine::KillOutcome::killed ? KillAnswer::accepted : KillAnswer::not_running;
        }
    }

    // Removes the box (force), then confirms it is gone; one retry, 15 s in all.
    net::awaitable<void> cleanup()
    {
        PhaseTimer phase(*this, "remove");
        if (m_attach) m_attach->cancel();
        if (m_wait) m_wait->cancel();
        auto& cleanup = m_receipt.cleanup;
        std::vector<std::string> boxes;
        if (!m_receipt.container_id.empty()) {
            boxes.push_back(m_receipt.container_id);
        } else if (m_create_uncertain) {
            const std::vector<std::string> filters{std::string(k_label_run) + "=" + m_box.run_id};
            auto listed = co_await m_engine.list_containers(filters, limits::k_query_timeout);
            if (listed)
                for (const auto& item : *listed)
                    if (const auto* id = item.as_object().if_contains("Id"); id && id->is_string())
                        boxes.emplace_back(id->as_string());
        }
        if (boxes.empty() && !m_create_uncertain) {
            cleanup.status = CleanupStatus::not_created;
            phase.done("skipped");
            if (auto removed = m_attempts.remove(m_box.run_id); !removed) cleanup.error = removed.error().message;
            co_return;
        }
        const auto budget_end = MonoClock::now() + limits::k_cleanup_budget;
        bool all_gone = !boxes.empty();
        for (const auto& id : boxes) {
            bool gone = false;
            for (int attempt = 0; attempt < 2 && !gone && MonoClock::now() < budget_end; ++attempt) {
                ++cleanup.attempts;
                auto removed = co_await m_engine.remove_container(id, limits::k_remove_timeout);
                if (!removed) {
                    cleanup.error = removed.error().message;
                    continue;
                }
                auto check = co_await m_engine.inspect_container(id, limits::k_inspect_timeout);
                gone = !check && check.error().code == "not_found";
                if (!gone) cleanup.error = check ? "the box was still listed after removal" : check.error().message;
            }
            all_gone = all_gone && gone;
        }
        cleanup.removed = all_gone;
        if (all_gone) {
            cleanup.status = CleanupStatus::removed;
            cleanup.error.reset();
            phase.done("ok");
            if (auto removed = m_attempts.remove(m_box.run_id); !removed) cleanup.error = removed.error().message;
        } else {
            cleanup.status = CleanupStatus::removal_unconfirmed;
            phase.done("failed");
            m_receipt.explanations.push_back(explain(
                "REMOVAL_UNCONFIRMED",
                "PyBox could not confirm that the box is gone; the sweep removes it after its expiry.",
                {{"expires_at", m_box.expires_at}, {"error", cleanup.error.value_or(std::string())}}));
        }
    }

    void finish()
    {
        auto& receipt = m_receipt;
        const bool started = m_run_started.has_value();
        if (started) {
            const EndVerdict verdict = classify_end(EndEvidence{
                receipt.observed.engine_state.is_object() ? &receipt.observed.engine_state : nullptr, m_kill,
                m_wait_observed_exit, receipt.configured.wall_timeout_s, receipt.configured.guest_timer_s,
                m_cancelled});
            receipt.observed.termination = verdict.termination;
            for (const auto& explanation : verdict.explanations) receipt.explanations.push_back(explanation);
            for (const auto& [key, why] : verdict.unknown) receipt.unknown[key] = why;
        } else {
            receipt.observed.termination.mechanism = TerminationMechanism::not_started;
            receipt.unknown.erase("final_resource_counters");
        }
        if (m_cancelled) {
            receipt.lifecycle.cancelled = true;
            receipt.explanations.push_back(explain("CLIENT_DISCONNECTED",
                                                   "The client went away, so PyBox stopped the run and removed the box."));
        }

        const auto& out = m_demuxer.stdout_capture();
        const auto& err = m_demuxer.stderr_capture();
        receipt.capture.stdout_stream = proto::StreamRecord{out.kept, out.total_bytes};
        receipt.capture.stderr_stream = proto::StreamRecord{err.kept, err.total_bytes};
        if (m_demuxer.protocol_error()) m_stream_error = "malformed output stream: " + *m_demuxer.protocol_error();
        receipt.capture.stream_error = m_stream_error;
        receipt.capture.output_complete =
            started && m_stream_ended && !m_stream_error && !out.truncated() && !err.truncated();
        for (const auto* stream : {&out, &err}) {
            if (!stream->truncated()) continue;
            const char* name = stream == &out ? "stdout" : "stderr";
            receipt.explanations.push_back(explain(
                "OUTPUT_TRUNCATED",
                std::string("The program wrote more to ") + name + " than the output limit; the first " +
                    std::to_string(stream->kept.size()) + " bytes were kept and the rest counted.",
                {{"stream", name},
                 {"bytes_kept", stream->kept.size()},
                 {"bytes_dropped", stream->dropped_bytes()},
                 {"output_limit_bytes", m_request.output_limit_bytes}}));
        }
        if (m_stream_error && started)
            receipt.explanations.push_back(explain("STREAM_ERROR", *m_stream_error));
        receipt.lifecycle.total_s = seconds_between(m_started, MonoClock::now());
    }

    net::any_io_executor m_executor;
    engine::EngineClient& m_engine;
    const AttemptLog& m_attempts;
    proto::RunRequest m_request;
    proto::BoxPolicy m_policy;
    BoxRuntime m_runtime;
    BoxIdentity m_box;
    proto::Receipt m_receipt;

    net::steady_timer m_deadline_timer;
    net::steady_timer m_drain_timer;
    engine::StreamDemuxer m_demuxer;
    std::unique_ptr<engine::AttachSession> m_attach;
    std::unique_ptr<engine::WaitHandle> m_wait;

    MonoClock::time_point m_started;
    std::optional<MonoClock::time_point> m_run_started;
    KillAnswer m_kill = KillAnswer::not_sent;
    bool m_cancelled = false;
    bool m_exited = false;
    bool m_wait_observed_exit = false;
    bool m_stream_ended = false;
    bool m_create_uncertain = false;
    std::optional<std::string> m_stream_error;
};

}  // namespace

SealedRunService::SealedRunService(net::any_io_executor executor, engine::EngineClient& engine, BoxRuntime runtime,
                                   ImageVerifier verify_image, AttemptLog attempts, std::string installation_id,
                                   ReconciliationSummary reconciliation)
    : m_executor(executor), m_engine(engine), m_runtime(std::move(runtime)), m_verify_image(std::move(verify_image)),
      m_attempts(std::move(attempts)), m_installation_id(std::move(installation_id)),
      m_reconciliation(std::move(reconciliation)), m_lifecycle_lock(executor)
{
}

net::awaitable<Expected<proto::Receipt>> SealedRunService::run(proto::RunRequest request,
                                                               net::cancellation_slot cancelled)
{
    if (auto valid = proto::validate_run_request(request); !valid) co_return valid.error();
    auto policy = proto::policy_for_image(request.image);
    if (!policy) co_return make_error("unknown_image", "There is no image named \"" + request.image + "\".");

    const std::string image_name = request.image;
    RunContext run(m_executor, m_engine, m_attempts, std::move(request), *policy, m_runtime);
    bool disconnected = false;
    if (cancelled.is_connected())
        cancelled.assign([&](net::cancellation_type) { disconnected = true; run.cancel(); });
    struct SlotRelease {
        net::cancellation_slot slot;
        ~SlotRelease() { if (slot.is_connected()) slot.clear(); }
    } release{cancelled};

    auto guard = co_await m_lifecycle_lock.scoped_lock();
    if (disconnected) co_return make_error("client_disconnected", "The client went away before the run began.");

    if (m_engine.api_version().empty()) {
        auto pinged = co_await m_engine.ping(limits::k_query_timeout);
        if (!pinged) co_return with_engine_hint(pinged.error());
    }
    auto image = co_await m_verify_image(image_name);
    if (!image) co_return with_engine_hint(image.error());

    run.identify(m_installation_id, *image);
    if (auto noted = run.write_attempt(); !noted) co_return noted.error();
    co_await run.execute();
    run.receipt().cleanup.reconciliation = m_reconciliation ? m_reconciliation() : json::value(nullptr);
    co_return std::move(run.receipt());
}

}  // namespace pybox::daemon
