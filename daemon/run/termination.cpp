#include "daemon/run/termination.hpp"

#include "common/clock.hpp"

#include <boost/json/object.hpp>

#include <chrono>

namespace pybox::daemon {

namespace json = boost::json;
using proto::explain;
using proto::SignalSource;
using proto::TerminationMechanism;

namespace {

// What the engine reports for a box whose first process was killed by SIGKILL.
constexpr std::int64_t k_sigkill_exit_code = 137;
constexpr int k_sigkill = 9;
constexpr double k_ns_per_s = 1e9;
// How close to the box timer a lifetime must come for the timer to be a possible sender.
constexpr double k_guest_timer_slack_s = 0.05;

json::object merged(json::object base, const json::object& more)
{
    for (const auto& [key, value] : more) base[key] = value;
    return base;
}

// Where the engine's FinishedAt lies relative to the moment PyBox sent the kill, on the daemon's
// wall clock: FinishedAt - offset, with offset in [min, max].
enum class Order { before_kill, after_kill, too_close, not_compared };

struct KillOrder {
    Order order = Order::not_compared;
    std::string why;
    json::object evidence;
};

KillOrder order_against_kill(std::optional<std::int64_t> finished_ns, const EndEvidence& evidence)
{
    if (!evidence.kill_sent_unix_ns) return {Order::not_compared, "the time the kill was sent was not recorded", {}};
    if (!finished_ns) return {Order::not_compared, "the engine's FinishedAt could not be read", {}};
    if (!evidence.engine_clock_offset)
        return {Order::not_compared,
                "the offset between the engine's clock and the daemon's was not measured (see "
                "unknown.absolute_clock_alignment)",
                {}};
    const auto& offset = *evidence.engine_clock_offset;
    const std::int64_t earliest = *finished_ns - offset.max_ns - *evidence.kill_sent_unix_ns;
    const std::int64_t latest = *finished_ns - offset.min_ns - *evidence.kill_sent_unix_ns;
    json::object bracket{{"finished_minus_kill_sent_ns", json::object{{"min", earliest}, {"max", latest}}}};
    if (latest < 0)
        return {Order::before_kill,
                "the engine's FinishedAt is before the moment PyBox sent the kill, even allowing for the "
                "uncertainty of the clock offset",
                std::move(bracket)};
    if (earliest > 0)
        return {Order::after_kill,
                "the engine's FinishedAt is after the moment PyBox sent the kill, even allowing for the "
                "uncertainty of the clock offset",
                std::move(bracket)};
    return {Order::too_close,
            "the engine's FinishedAt lies within the " + std::to_string((latest - earliest) / 1000) +
                " microseconds of uncertainty of the clock offset around the moment PyBox sent the kill, so "
                "which came first is not known",
            std::move(bracket)};
}

// Whether PyBox's kill is what ended the box.
enum class KillRole { none, not_the_cause, the_cause, undecided };

struct KillFinding {
    KillRole role = KillRole::none;
    std::string why;
    json::object evidence;
};

KillFinding judge_kill(const EndEvidence& evidence, std::int64_t code, std::optional<std::int64_t> finished_ns)
{
    if (!evidence.kill) return {};
    json::object kill_evidence{{"kill_reason", evidence.client_gone ? "client_disconnected" : "deadline"},
                               {"kill_answer", proto::to_string(*evidence.kill)}};
    kill_evidence = merged(std::move(kill_evidence), evidence.engine_state->exit_code_record);
    if (!evidence.client_gone) kill_evidence["wall_timeout_s"] = evidence.wall_timeout_s;
    if (*evidence.kill == KillAnswer::not_running)
        return {KillRole::not_the_cause,
                "the engine answered 409: the box had already stopped when the kill arrived",
                std::move(kill_evidence)};
    if (code != k_sigkill_exit_code)
        return {KillRole::not_the_cause,
                "a box ended by SIGKILL reports exit code 137, and this one reported " + std::to_string(code),
                std::move(kill_evidence)};
    KillOrder order = order_against_kill(finished_ns, evidence);
    kill_evidence = merged(std::move(kill_evidence), order.evidence);
    switch (order.order) {
    case Order::before_kill:
        return {KillRole::not_the_cause, std::move(order.why), std::move(kill_evidence)};
    case Order::after_kill:
        if (*evidence.kill == KillAnswer::accepted)
            return {KillRole::the_cause, std::move(order.why), std::move(kill_evidence)};
        return {KillRole::undecided,
                "the kill request got no clear answer from the engine; the box ended with exit code 137 after "
                "it was sent, but whether the kill reached it is not known",
                std::move(kill_evidence)};
    case Order::too_close:
        return {KillRole::undecided, std::move(order.why), std::move(kill_evidence)};
    case Order::not_compared:
        break;
    }
    return {KillRole::undecided,
            "exit code 137 is also what a program can report by itself, and the box's end could not be "
            "placed before or after the kill: " +
                order.why,
            std::move(kill_evidence)};
}

// An exit code that only suggests a signal: record the inference and the doubt.
void infer_signal(EndVerdict& verdict, std::int64_t code)
{
    if (code <= 128 || code >= 160) return;
    const int signal = static_cast<int>(code - 128);
    verdict.termination.inferred_signal = signal;
    verdict.unknown.emplace_back("signal", "exit code " + std::to_string(code) + " is what a process killed by signal " +
                                               std::to_string(signal) +
                                               " reports, but the program may have exited with it itself");
}

std::string kill_occasion(const EndEvidence& evidence)
{
    return evidence.client_gone ? "because the client went away" : "at the deadline";
}

}  // namespace

EndVerdict classify_end(const EndEvidence& evidence)
{
    EndVerdict verdict;
    auto& termination = verdict.termination;
    termination.deadline_kill_sent = evidence.kill.has_value() && !evidence.client_gone;
    if (termination.deadline_kill_sent) {
        termination.deadline_kill_answer = evidence.kill;
        if (evidence.kill_sent_unix_ns)
            termination.deadline_kill_sent_at = rfc3339_utc(WallClock::time_point(
                std::chrono::duration_cast<WallClock::duration>(std::chrono::nanoseconds(*evidence.kill_sent_unix_ns))));
    }
    const json::value kill_answer =
        evidence.kill ? json::value(proto::to_string(*evidence.kill)) : json::value(nullptr);

    const engine::BoxState* state = evidence.engine_state;
    if (state == nullptr || !state->reported) {
        termination.mechanism = TerminationMechanism::engine_lost;
        verdict.explanations.push_back(explain("ENGINE_STATE_UNREAD",
                                               "The engine did not report the box's final state, so how the "
                                               "program ended is not known.",
                                               {{"kill_answer", kill_answer}}));
        verdict.unknown.emplace_back("exact_termination_cause", "the final engine state could not be read");
        verdict.unknown.emplace_back("exit_code", "the final engine state could not be read");
        return verdict;
    }

    const bool running = state->running;
    termination.exit_code = running ? std::nullopt : state->exit_code;
    const auto started_ns = state->started_at_ns;
    const auto finished_ns = state->finished_at_ns;
    if (started_ns && finished_ns && *finished_ns >= *started_ns)
        termination.engine_lifetime_s = static_cast<double>(*finished_ns - *started_ns) / k_ns_per_s;

    const bool engine_oom = state->oom_killed;
    const bool kernel_oom = evidence.kernel_oom_kills && *evidence.kernel_oom_kills > 0;
    json::object state_evidence = state->summary;
    if (evidence.kernel_oom_kills) state_evidence["kernel_oom_kills"] = *evidence.kernel_oom_kills;

    if (running || !termination.exit_code) {
        termination.mechanism = TerminationMechanism::engine_lost;
        verdict.explanations.push_back(explain("EXIT_NOT_OBSERVED",
                                               "The engine still reported the box as running after the run "
                                               "ended; the box was removed by force.",
                                               state_evidence));
        verdict.unknown.emplace_back("exit_code", "the engine never reported the program's exit");
        verdict.unknown.emplace_back("exact_termination_cause", "the engine never reported the program's exit");
        return verdict;
    }

    if (kernel_oom && !engine_oom)
        verdict.explanations.push_back(explain(
            "OOM_KILL_COUNTED_BY_KERNEL",
            "The kernel counted " + std::to_string(*evidence.kernel_oom_kills) +
                " OOM kill(s) in the box's memory cgroup, though the engine reported OOMKilled false.",
            state_evidence));
    const bool oom_seen = engine_oom || kernel_oom;
    const std::string oom_reporter = engine_oom ? "reported by the engine" : "counted by the kernel";
    auto note_oom_in_box = [&](std::string what_followed) {
        verdict.explanations.push_back(explain("OOM_KILL_IN_BOX",
                                               "A process in the box was killed by the kernel for memory (" +
                                                   oom_reporter + "), " + std::move(what_followed),
                                               state_evidence));
    };

    const std::int64_t code = *termination.exit_code;
    KillFinding kill = judge_kill(evidence, code, finished_ns);
    switch (kill.role) {
    case KillRole::the_cause:
        termination.signal = k_sigkill;
        termination.signal_source = SignalSource::pybox_kill;
        if (evidence.client_gone) {
            termination.mechanism = TerminationMechanism::stopped_on_disconnect;
            verdict.explanations.push_back(explain(
                "STOPPED_ON_DISCONNECT",
                "Stopped by PyBox before the deadline because the client went away: PyBox sent SIGKILL, the "
                "engine accepted it, and the box ended after it with exit code 137.",
                std::move(kill.evidence)));
        } else {
            termination.mechanism = TerminationMechanism::deadline_kill;
            verdict.explanations.push_back(explain(
                "DEADLINE_KILL",
                "Stopped by PyBox at the deadline: the program was still running, PyBox sent SIGKILL, the "
                "engine accepted it, and the box ended after it with exit code 137.",
                std::move(kill.evidence)));
        }
        if (oom_seen) note_oom_in_box("but the box ended by PyBox's kill.");
        return verdict;
    case KillRole::undecided:
        termination.mechanism = TerminationMechanism::cause_not_established;
        infer_signal(verdict, code);
        verdict.explanations.push_back(explain("CAUSE_NOT_ESTABLISHED",
                                               "PyBox sent SIGKILL " + kill_occasion(evidence) +
                                                   " and the box ended with exit code 137, but what ended it "
                                                   "cannot be established: " +
                                                   kill.why + ".",
                                               std::move(kill.evidence)));
        verdict.unknown.emplace_back("exact_termination_cause", kill.why);
        if (oom_seen) note_oom_in_box("which may also have ended the box.");
        return verdict;
    case KillRole::not_the_cause:
    case KillRole::none:
        break;
    }

    // The box ended by itself: the program's exit, or an OOM kill.
    if (oom_seen && code == k_sigkill_exit_code) {
        termination.mechanism = TerminationMechanism::out_of_memory;
        termination.signal = k_sigkill;
        termination.signal_source = SignalSource::oom_kill;
        verdict.explanations.push_back(explain("OUT_OF_MEMORY",
                                               "Out of memory: the kernel killed a process in the box at its "
                                               "memory limit (" +
                                                   oom_reporter + "), and the box ended with exit code 137.",
                                               state_evidence));
    } else {
        termination.mechanism = TerminationMechanism::target_exit_observed;
        if (oom_seen) note_oom_in_box("but the program ended with its own exit code " + std::to_string(code) + ".");
        infer_signal(verdict, code);
        if (termination.inferred_signal) {
            json::object signal_evidence = state_evidence;
            signal_evidence["inferred_signal"] = *termination.inferred_signal;
            std::string message = "The program ended with exit code " + std::to_string(code) +
                                  ", which is what a process killed by signal " +
                                  std::to_string(*termination.inferred_signal) +
                                  " reports; no signal was observed, so it may also have exited with that code "
                                  "itself.";
            if (*termination.inferred_signal == k_sigkill && termination.engine_lifetime_s &&
                *termination.engine_lifetime_s - evidence.timer_delay_s >=
                    evidence.guest_timer_s - k_guest_timer_slack_s) {
                message += " Its lifetime reached the box timer, which may have sent SIGKILL.";
                signal_evidence["guest_timer_s"] = evidence.guest_timer_s;
            }
            verdict.explanations.push_back(
                explain("EXIT_CODE_SUGGESTS_SIGNAL", std::move(message), std::move(signal_evidence)));
        } else {
            verdict.explanations.push_back(explain(
                "EXITED", "The program ended by itself with exit code " + std::to_string(code) + ".", state_evidence));
        }
    }
    if (kill.role == KillRole::not_the_cause)
        verdict.explanations.push_back(explain("ENDED_BEFORE_KILL",
                                               "PyBox sent SIGKILL " + kill_occasion(evidence) +
                                                   ", but the box had already ended by itself: " + kill.why + ".",
                                               std::move(kill.evidence)));
    return verdict;
}

}  // namespace pybox::daemon
