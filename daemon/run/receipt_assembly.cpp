#include "daemon/run/receipt_assembly.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "common/version.hpp"
#include "daemon/run/capture_record.hpp"
#include "daemon/run/files_report.hpp"
#include "daemon/run/termination.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <stdexcept>

namespace pybox::daemon {

namespace json = boost::json;
using proto::CleanupStatus;
using proto::explain;
using proto::TerminationMechanism;

namespace {

json::object error_evidence(const Error& error) { return {{"code", error.code}, {"message", error.message}}; }

json::array names_of(const std::vector<std::string>& names)
{
    json::array array;
    for (const auto& name : names) array.emplace_back(name);
    return array;
}

// The WAIT_FAILED sentence for a wait that ended without the box's exit, by what ended it.
std::string wait_failure_sentence(const Error& error)
{
    if (error.code == api_error::k_engine_timeout) return "The engine did not report the box's exit in time.";
    if (error.code == api_error::k_engine_protocol)
        return "The connection waiting for the box's exit broke or carried a malformed answer before the engine "
               "reported the exit.";
    if (error.code == api_error::k_cancelled) return "PyBox stopped waiting for the box's exit.";
    return "The engine answered the wait with an error instead of the box's exit.";
}

}  // namespace

proto::Explanation explain_problem(const Problem& problem)
{
    using Kind = Problem::Kind;
    switch (problem.kind) {
    case Kind::create_failed:
        return explain("CREATE_FAILED", "The engine did not create the box; the program never ran.",
                       error_evidence(problem.error));
    case Kind::attempt_note_stale:
        return explain("ATTEMPT_NOTE_STALE",
                       "PyBox could not write the box's container ID into the run's attempt note; had the daemon "
                       "stopped mid-run, its sweep would still have found the box by its labels.",
                       error_evidence(problem.error));
    case Kind::create_warnings:
        return explain("CREATE_WARNINGS",
                       "The engine created the box with warnings, so its settings are not exactly the ones PyBox "
                       "asked for; the box was removed without starting.",
                       {{"warnings", names_of(problem.names)}});
    case Kind::verify_failed:
        return explain("VERIFY_FAILED", "The box's settings could not be read back, so it was not started.",
                       error_evidence(problem.error));
    case Kind::policy_mismatch:
        return explain("POLICY_MISMATCH",
                       "The engine's effective settings differ from the box policy; the box was removed without "
                       "starting.",
                       {{"fields", names_of(problem.names)}});
    case Kind::policy_mismatch_after_run:
        return explain("POLICY_MISMATCH_AFTER_RUN",
                       "The engine's report of the ended box differs from the box policy in a setting it reports "
                       "only once a box ran; the program ran in a box that was not as asked.",
                       {{"fields", names_of(problem.names)}});
    case Kind::attach_failed:
        return explain("ATTACH_FAILED", "PyBox could not attach to the box; it was not started.",
                       error_evidence(problem.error));
    case Kind::wait_not_registered:
        return explain("WAIT_FAILED", "PyBox could not register for the box's exit; it was not started.",
                       error_evidence(problem.error));
    case Kind::start_failed:
        return explain("START_FAILED", "The engine did not start the box.", error_evidence(problem.error));
    case Kind::wait_failed:
        return explain("WAIT_FAILED", wait_failure_sentence(problem.error), error_evidence(problem.error));
    case Kind::kill_failed:
        return explain("KILL_FAILED", "PyBox's kill request at the deadline failed.", error_evidence(problem.error));
    }
    throw std::logic_error("a Problem of no known kind");
}

namespace {

// The lifecycle's phases, in seconds from `base`.
std::vector<proto::Phase> phases_from(MonoClock::time_point base, const std::vector<PhaseRecord>& records)
{
    std::vector<proto::Phase> phases;
    for (const auto& record : records)
        phases.push_back(proto::Phase{record.name, seconds_between(base, record.begun),
                                      seconds_between(record.begun, record.ended), record.outcome});
    return phases;
}

void record_lifecycle(const RunDescription& description, const RunEvidence& evidence, proto::Lifecycle& lifecycle)
{
    lifecycle.warm = description.kind == BoxKind::warm;
    if (evidence.box_started_wall) lifecycle.box_started_at = rfc3339_utc(*evidence.box_started_wall);
    if (evidence.preparation) {
        proto::Preparation preparation;
        preparation.phases = phases_from(evidence.made, *evidence.preparation);
        if (evidence.box_started) {
            preparation.total_s = seconds_between(evidence.made, *evidence.box_started);
            preparation.waited_s = seconds_between(*evidence.box_started, evidence.began);
        }
        lifecycle.preparation = std::move(preparation);
    }
    // The phases run one after another, so the last one ended is the last one begun.
    if (!evidence.phases.empty()) lifecycle.last_phase = evidence.phases.back().name;
    lifecycle.timeouts = evidence.timeouts;
    lifecycle.phases = phases_from(evidence.began, evidence.phases);
    if (evidence.arrived) lifecycle.queued_s = seconds_between(*evidence.arrived, evidence.began);
    lifecycle.total_s = seconds_between(evidence.began, evidence.ended);
}

// The cleanup section, and REMOVAL_UNCONFIRMED when the box may still be there.
void record_cleanup(const RunDescription& description, const RunEvidence& evidence, proto::Receipt& receipt)
{
    auto& cleanup = receipt.cleanup;
    if (!evidence.removal) {
        cleanup.status = CleanupStatus::not_created;
        cleanup.error = evidence.note_not_removed;
        return;
    }
    const RemovalOutcome& removal = *evidence.removal;
    cleanup.attempts = removal.attempts;
    cleanup.error = removal.error;
    cleanup.removed = removal.all_gone;
    if (removal.all_gone) {
        cleanup.status = CleanupStatus::removed;
        if (evidence.note_not_removed) cleanup.error = evidence.note_not_removed;
        return;
    }
    cleanup.status = CleanupStatus::removal_unconfirmed;
    receipt.explanations.push_back(explain(
        "REMOVAL_UNCONFIRMED",
        "PyBox could not confirm that the box is gone; the daemon removes it before its next run once the "
        "engine answers, or the sweep after its expiry.",
        {{"expires_at", description.box.expires_at}, {"error", cleanup.error.value_or(std::string())}}));
}

// How the program ended, once it started (termination.hpp).
void record_end(const RunEvidence& evidence, AssembledRun& run)
{
    proto::Receipt& receipt = run.receipt;
    if (!evidence.program_started) {
        receipt.observed.termination.mechanism = TerminationMechanism::not_started;
        return;
    }
    EndEvidence end;
    end.engine_state = evidence.final_state ? &*evidence.final_state : nullptr;
    end.kill = evidence.kill;
    end.kill_sent_unix_ns = evidence.kill_sent_unix_ns;
    if (evidence.kill_sent_mono) end.kill_sent_mono_ns = monotonic_ns(*evidence.kill_sent_mono);
    if (evidence.program_started) end.delivered_mono_ns = monotonic_ns(*evidence.program_started);
    end.kernel = evidence.watch.process_ends ? &*evidence.watch.process_ends : nullptr;
    end.kernel_unread = evidence.watch.process_ends_unread;
    end.engine_clock_offset = evidence.engine_clock_offset;
    end.wall_timeout_s = receipt.configured.wall_timeout_s;
    end.guest_timer_s = receipt.configured.guest_timer_s;
    if (evidence.box_started) end.timer_delay_s = seconds_between(*evidence.box_started, *evidence.program_started);
    end.client_gone = evidence.cancelled;
    end.kernel_oom_kills = evidence.watch.oom_kills;
    const EndVerdict verdict = classify_end(end);
    run.engine_lost = verdict.termination.mechanism == TerminationMechanism::engine_lost;
    receipt.observed.termination = verdict.termination;
    for (const auto& explanation : verdict.explanations) receipt.explanations.push_back(explanation);
    for (const auto& [key, why] : verdict.unknown) receipt.unknown[key] = why;
}

proto::Explanation explain_remade_box(const RemadeBox& remade)
{
    return explain("BOX_REMADE",
                   "The first box could not start as it was made (" + remade.start_failure.message +
                       "); it was removed and confirmed gone, and the run went on in a box the engine made again "
                       "otherwise (observed.effective_policy says how).",
                   json::object{{"first_container_id", remade.container_id},
                                {"start_failure", error_evidence(remade.start_failure)}});
}

proto::Explanation explain_engine_gone(const EngineGone& gone)
{
    json::object evidence{{"final_inspect", error_evidence(gone.final_inspect)}, {"ping", error_evidence(gone.ping)}};
    if (gone.wait) evidence["wait"] = error_evidence(*gone.wait);
    return explain("ENGINE_GONE",
                   "The engine went away mid-run: it stopped answering before it reported the box's exit, so the "
                   "program's end and exit code were not observed, its output is incomplete, and the box's removal "
                   "is not confirmed. Without the engine the box timer (the deadline + " +
                       std::to_string(static_cast<int>(limits::k_box_timer_margin_s)) +
                       " s) still ends the program; once the engine answers again PyBox removes the box before its "
                       "next run.",
                   std::move(evidence));
}

std::string why_no_files_report(const RunEvidence& evidence, TerminationMechanism mechanism)
{
    const std::string kept = "; no output file was kept.";
    if (!evidence.program_started) return "The program never started" + kept;
    switch (mechanism) {
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

// The receipt's `files` and the files to return, from the helper's report.
void record_files(const proto::RunRequest::Files& sent, const RunEvidence& evidence, AssembledRun& answer)
{
    auto& receipt = answer.receipt;
    FilesReportEvidence report;
    const auto& split = evidence.output.stdout_split();
    if (split && split->found()) {
        report.report = split->tail();
        report.report_truncated = split->tail_truncated();
    }
    FilesOutcome outcome =
        read_files_report(report, sent, why_no_files_report(evidence, receipt.observed.termination.mechanism));
    receipt.files = std::move(outcome.record);
    answer.outputs = std::move(outcome.outputs);
    const auto& files = *receipt.files;
    if (!files.errors.empty())
        receipt.explanations.push_back(explain("FILES_NOT_RETURNED", files.errors.front(),
                                               {{"errors", static_cast<std::uint64_t>(files.errors.size())}}));
    if (!files.skipped.empty() || files.skipped_unlisted > 0)
        receipt.explanations.push_back(explain(
            "FILES_SKIPPED",
            "Some of what the program left in the output folder did not come back (files.skipped says why).",
            {{"listed", static_cast<std::uint64_t>(files.skipped.size())}, {"unlisted", files.skipped_unlisted}}));
}

// Where observed.environment comes from.
constexpr std::string_view k_environment_source =
    "the box's first process, before the program: the first line of the box's stdout, taken off the program's output";

// observed.environment from the box's report, or unknown.environment with the reason: once the
// program started, whatever ran it (nothing to tell before).
void record_environment(const RunEvidence& evidence, proto::Receipt& receipt)
{
    if (!evidence.program_started) return;
    if (!evidence.environment || !evidence.environment->variables) {
        receipt.unknown["environment"] =
            evidence.environment ? evidence.environment->unknown_reason : "the box's output was never read";
        return;
    }
    const auto set = box_environment();
    proto::EnvironmentRecord record{std::string(k_environment_source), {}};
    for (const auto& variable : *evidence.environment->variables)
        if (std::find(set.begin(), set.end(), variable) == set.end()) record.beyond_spec.push_back(variable);
    receipt.observed.environment = std::move(record);
}

}  // namespace

AssembledRun assemble_receipt(const RunDescription& description, const RunEvidence& evidence)
{
    AssembledRun answer;
    auto& receipt = answer.receipt;
    const auto& request = description.request;

    auto& identity = receipt.identity;
    identity.run_id = description.box.run_id;
    identity.installation_id = description.box.installation_id;
    identity.image = request.image;
    identity.image_id = description.image.image_id;
    identity.recipe_sha256 = description.image.recipe_sha256;
    identity.created_at = description.created_at;
    identity.expires_at = description.box.expires_at;
    identity.daemon_version = pybox::version();
    receipt.engine = description.engine;
    receipt.container_id = evidence.container_id;
    receipt.source_sha256 = sha256_hex(request.source);
    receipt.source_bytes = request.source.size();

    auto& configured = receipt.configured;
    configured.wall_timeout_s = request.timeout_s;
    configured.guest_timer_s = description.guest_timer_s();
    configured.output_limit_bytes = static_cast<std::int64_t>(request.output_limit_bytes);
    configured.policy = description.policy;
    configured.command = description.command;
    configured.files_helper_sha256 = description.files_helper_sha256;

    auto& observed = receipt.observed;
    observed.policy_verified_before_start = evidence.policy_verified;
    observed.effective_policy = evidence.effective_policy;
    if (evidence.final_state) observed.engine_state = evidence.final_state->raw;
    record_lifecycle(description, evidence, receipt.lifecycle);
    receipt.clock_domains.engine_offset = evidence.engine_clock_offset;
    receipt.clock_domains.engine_clocks = evidence.engine_clocks;

    if (evidence.remade) receipt.explanations.push_back(explain_remade_box(*evidence.remade));
    for (const auto& problem : evidence.problems) receipt.explanations.push_back(explain_problem(problem));
    record_cleanup(description, evidence, receipt);
    receipt.cleanup.reconciliation = evidence.reconciliation;
    record_end(evidence, answer);
    if (evidence.engine_gone) receipt.explanations.push_back(explain_engine_gone(*evidence.engine_gone));
    if (!evidence.engine_clock_offset)
        receipt.unknown["absolute_clock_alignment"] =
            evidence.clock_read_failed.value_or("the program never started, so the engine's clock was not read");
    observed.resources = evidence.watch.resources;
    for (const auto& [key, why] : evidence.watch.unknown) receipt.unknown[key] = why;
    if (!evidence.container_id.empty())
        for (const auto& [key, why] : evidence.engine_unknown) receipt.unknown[key] = why;
    for (const auto& [key, why] : evidence.settings_unknown) receipt.unknown[key] = why;
    if (evidence.cancelled) {
        receipt.lifecycle.cancelled = true;
        receipt.explanations.push_back(
            explain("CLIENT_DISCONNECTED", "The client went away, so PyBox stopped the run and removed the box."));
    }
    record_environment(evidence, receipt);
    record_capture({evidence.output, evidence.program_started.has_value(), evidence.exit_observed,
                    evidence.stream_ended, evidence.stream_error, evidence.output_malformed,
                    request.output_limit_bytes, evidence.output_provenance},
                   receipt);
    if (request.files) record_files(*request.files, evidence, answer);
    return answer;
}

}  // namespace pybox::daemon
