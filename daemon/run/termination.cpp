#include "daemon/run/termination.hpp"

#include "common/clock.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdio>

namespace pybox::daemon {

namespace json = boost::json;
using proto::explain;
using proto::SignalSource;
using proto::TerminationMechanism;
using watcher::ProcExit;

namespace {

// What the engine reports for a box whose first process was killed by SIGKILL.
constexpr std::int64_t k_sigkill_exit_code = 137;
constexpr int k_sigkill = 9;
constexpr double k_ns_per_s = 1e9;
// How close to the box timer a lifetime must come for the timer to be a possible sender.
constexpr double k_guest_timer_slack_s = 0.05;
constexpr std::string_view k_kernel_source = "kernel_proc_connector";

json::object merged(json::object base, const json::object& more)
{
    for (const auto& [key, value] : more) base[key] = value;
    return base;
}

std::string milliseconds_text(std::int64_t ns)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", static_cast<double>(ns) / 1e6);
    return text;
}

std::string kill_occasion(const EndEvidence& evidence)
{
    return evidence.client_gone ? "because the client went away" : "at the deadline";
}

// The kill's part of every explanation that mentions it.
json::object kill_evidence(const EndEvidence& evidence)
{
    json::object record{{"kill_reason", evidence.client_gone ? "client_disconnected" : "deadline"},
                        {"kill_answer", proto::to_string(*evidence.kill)}};
    if (!evidence.client_gone) record["wall_timeout_s"] = evidence.wall_timeout_s;
    return record;
}

// ---- The kernel's record ------------------------------------------------------------------

struct KernelEnds {
    const ProcExit& program;
    const ProcExit& box;
};

proto::ProcessEndRecord end_record(const ProcExit& end, const EndEvidence& evidence)
{
    proto::ProcessEndRecord record;
    record.source = std::string(k_kernel_source);
    if (end.exited()) {
        record.exit_code = end.exit_code();
    } else {
        record.signal = end.signal();
    }
    if (evidence.kill && evidence.kill_sent_mono_ns)
        record.since_kill_sent_s = static_cast<double>(end.mono_ns - *evidence.kill_sent_mono_ns) / k_ns_per_s;
    if (evidence.delivered_mono_ns)
        record.since_delivery_s = static_cast<double>(end.mono_ns - *evidence.delivered_mono_ns) / k_ns_per_s;
    return record;
}

json::object end_evidence(const ProcExit& end)
{
    json::object record;
    if (end.exited()) {
        record["exit_code"] = end.exit_code();
    } else {
        record["signal"] = end.signal();
    }
    return record;
}

std::string end_text(const ProcExit& end)
{
    return end.exited() ? "an exit with code " + std::to_string(end.exit_code())
                        : "a death by signal " + std::to_string(end.signal());
}

class KernelRules {
public:
    KernelRules(const EndEvidence& evidence, KernelEnds ends, bool oom_seen, json::object state_evidence,
                EndVerdict& verdict)
        : m_evidence(evidence), m_ends(ends), m_oom_seen(oom_seen), m_verdict(verdict)
    {
        m_record = std::move(state_evidence);
        m_record["program_end"] = end_evidence(ends.program);
        m_record["box_end"] = end_evidence(ends.box);
        m_record["source"] = k_kernel_source;
        if (sent()) {
            m_record = merged(std::move(m_record), kill_evidence(evidence));
            m_record["program_end_minus_kill_sent_ns"] = ends.program.mono_ns - *evidence.kill_sent_mono_ns;
            m_record["box_end_minus_kill_sent_ns"] = ends.box.mono_ns - *evidence.kill_sent_mono_ns;
        }
    }

    void decide()
    {
        auto& termination = m_verdict.termination;
        const ProcExit& program = m_ends.program;
        if (program.exited()) {
            termination.exit_code = program.exit_code();
            termination.mechanism = TerminationMechanism::target_exit_observed;
            explain("EXITED", "The program ended by itself with exit code " + std::to_string(program.exit_code()) +
                              ", as the kernel recorded its end.");
            note_oom_in_box("but the program ended with its own exit code " + std::to_string(program.exit_code()) +
                            ".");
            note_kill_after_own_end();
            return;
        }
        termination.exit_code = m_evidence.engine_state->exit_code;
        if (program.signal() != k_sigkill) {
            signalled_from_inside("a fault in the program, the program itself or another process in the box");
            note_kill_after_own_end();
            return;
        }
        const ProcExit& box = m_ends.box;
        const bool box_killed = !box.exited() && box.signal() == k_sigkill;
        if (box_killed && sent() && after_send(box) && after_send(program)) {
            killed_after_send();
            return;
        }
        if (box_killed && (!sent() || after_send(program))) {
            // Nothing inside the box can kill its first process, and PyBox had not sent its kill.
            killed_from_outside();
            return;
        }
        // The box's first process outlived the program (and passed its end on, or its timer
        // fired), or the program died before PyBox's kill was sent.
        const bool reached_timer = m_evidence.delivered_mono_ns &&
                                   static_cast<double>(program.mono_ns - *m_evidence.delivered_mono_ns) / k_ns_per_s >=
                                       m_evidence.guest_timer_s - k_guest_timer_slack_s;
        if (m_oom_seen) {
            out_of_memory("the box's first process outlived the program");
        } else if (reached_timer && box.exited()) {
            termination.mechanism = TerminationMechanism::deadline_kill;
            termination.signal = k_sigkill;
            termination.signal_source = SignalSource::box_timer;
            json::object record = m_record;
            record["guest_timer_s"] = m_evidence.guest_timer_s;
            explain("BOX_TIMER_KILL",
                "Stopped by the box timer: the kernel recorded the program's death by SIGKILL once its life reached "
                "the box timer (the deadline and its margin), and the box's first process, which runs the timer, "
                "ended after it by itself.",
                std::move(record));
        } else {
            signalled_from_inside("the program itself or another process in the box (no OOM kill was counted, and "
                                  "the box's first process outlived it)");
        }
        note_kill_after_own_end();
    }

private:
    bool sent() const { return m_evidence.kill.has_value() && m_evidence.kill_sent_mono_ns.has_value(); }
    bool after_send(const ProcExit& end) const { return end.mono_ns >= *m_evidence.kill_sent_mono_ns; }

    void explain(std::string code, std::string message) { explain(std::move(code), std::move(message), m_record); }
    void explain(std::string code, std::string message, json::object record)
    {
        m_verdict.explanations.push_back(proto::explain(std::move(code), std::move(message), std::move(record)));
    }

    void note_oom_in_box(const std::string& what_followed)
    {
        if (m_oom_seen)
            explain("OOM_KILL_IN_BOX", "A process in the box was killed by the kernel for memory, " + what_followed);
    }

    void signalled_from_inside(const std::string& senders)
    {
        auto& termination = m_verdict.termination;
        const int signal = m_ends.program.signal();
        termination.mechanism = TerminationMechanism::target_exit_observed;
        termination.signal = signal;
        termination.signal_source = SignalSource::wait_status;
        explain("KILLED_BY_SIGNAL", "The program was ended by signal " + std::to_string(signal) +
                                    ", as the kernel recorded its end; who sent it is not known: " + senders + ".");
        m_verdict.unknown.emplace_back("signal", "the sender of signal " + std::to_string(signal) +
                                                     " is not recorded by the kernel: " + senders);
        note_oom_in_box("and the program died by signal " + std::to_string(signal) + ".");
    }

    // `box_fate`: what the kernel recorded of the box's first process beside it.
    void out_of_memory(const std::string& box_fate)
    {
        auto& termination = m_verdict.termination;
        termination.mechanism = TerminationMechanism::out_of_memory;
        termination.signal = k_sigkill;
        termination.signal_source = SignalSource::oom_kill;
        explain("OUT_OF_MEMORY", "Out of memory: the kernel recorded the program's death by SIGKILL and counted an OOM "
                                 "kill in the box at its memory limit, and " + box_fate + ".");
    }

    void killed_after_send()
    {
        auto& termination = m_verdict.termination;
        const auto kill = *m_evidence.kill;
        if (m_oom_seen || kill != proto::KillAnswer::accepted) {
            const std::string why =
                m_oom_seen ? "the kernel recorded the box killed by SIGKILL after PyBox sent its kill, but it also "
                             "counted an OOM kill in the box, which may have killed the program first"
                           : "the kill request got no clear answer from the engine; the kernel recorded the box killed "
                             "by SIGKILL after it was sent, but not by whom";
            undecided(why);
            return;
        }
        termination.signal = k_sigkill;
        termination.signal_source = SignalSource::pybox_kill;
        const std::string when = milliseconds_text(m_ends.box.mono_ns - *m_evidence.kill_sent_mono_ns);
        if (m_evidence.client_gone) {
            termination.mechanism = TerminationMechanism::stopped_on_disconnect;
            explain("STOPPED_ON_DISCONNECT",
                "Stopped by PyBox before the deadline because the client went away: the program was still running "
                "when PyBox sent SIGKILL, the engine accepted it, and the kernel recorded the box's first process "
                "killed by SIGKILL " + when + " ms later, the program with it.");
        } else {
            termination.mechanism = TerminationMechanism::deadline_kill;
            explain("DEADLINE_KILL", "Stopped by PyBox at the deadline: the program was still running when PyBox sent "
                                 "SIGKILL, the engine accepted it, and the kernel recorded the box's first process "
                                 "killed by SIGKILL " + when + " ms later, the program with it.");
        }
    }

    void killed_from_outside()
    {
        if (m_oom_seen) {
            out_of_memory("the box's first process was killed by SIGKILL too, with no kill of PyBox's before it");
            note_kill_after_own_end();
            return;
        }
        undecided("the kernel recorded the box's first process killed by SIGKILL, which only a sender outside the box "
                  "can do, but PyBox had sent no kill then and no OOM kill was counted");
    }

    void undecided(const std::string& why)
    {
        auto& termination = m_verdict.termination;
        termination.mechanism = TerminationMechanism::cause_not_established;
        explain("CAUSE_NOT_ESTABLISHED", "The program died by SIGKILL, but what sent it cannot be established: " + why + ".");
        m_verdict.unknown.emplace_back("exact_termination_cause", why);
    }

    // The program ended by itself; PyBox's kill, if any, did not end it.
    void note_kill_after_own_end()
    {
        if (!sent()) return;
        const std::int64_t gap = m_ends.program.mono_ns - *m_evidence.kill_sent_mono_ns;
        if (gap < 0) {
            explain("ENDED_BEFORE_KILL", "PyBox sent SIGKILL " + kill_occasion(m_evidence) + " " +
                                         milliseconds_text(-gap) + " ms after the kernel recorded the program's end (" +
                                         end_text(m_ends.program) + ").");
        } else {
            explain("ENDED_BEFORE_KILL_ARRIVED",
                "PyBox sent SIGKILL " + kill_occasion(m_evidence) + ", and the program ended by itself " +
                    milliseconds_text(gap) + " ms later, before the kill reached it: the kernel recorded " +
                    end_text(m_ends.program) + ".");
        }
    }

    const EndEvidence& m_evidence;
    KernelEnds m_ends;
    bool m_oom_seen;
    EndVerdict& m_verdict;
    json::object m_record;
};

// ---- The engine's report alone -------------------------------------------------------------

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
                "the engine's FinishedAt is after the moment PyBox sent the kill, but FinishedAt trails the kernel's "
                "record of the exit by up to tens of milliseconds, so the exit may have come before the kill",
                std::move(bracket)};
    return {Order::too_close,
            "the engine's FinishedAt lies within the " + std::to_string((latest - earliest) / 1000) +
                " microseconds of uncertainty of the clock offset around the moment PyBox sent the kill, so "
                "which came first is not known",
            std::move(bracket)};
}

// Whether PyBox's kill could have ended the box, from the engine's report alone: a box it ended
// reports 137, and nothing else in that report tells the kill's 137 from the program's own but
// the box's first process's record of the kill (kill_acknowledged), which the program cannot
// forge.
enum class KillRole { none, not_the_cause, undecided, ended_it };

struct KillFinding {
    KillRole role = KillRole::none;
    bool ended_before_send = false;  // the end is known to precede the kill's sending
    std::string why;
    json::object evidence;
};

KillFinding judge_kill(const EndEvidence& evidence, std::int64_t code, std::optional<std::int64_t> finished_ns,
                       bool oom_seen)
{
    if (!evidence.kill) return {};
    json::object record = merged(kill_evidence(evidence), evidence.engine_state->exit_code_record);
    KillOrder order = order_against_kill(finished_ns, evidence);
    record = merged(std::move(record), order.evidence);
    const bool before = order.order == Order::before_kill;
    if (*evidence.kill == KillAnswer::not_running)
        return {KillRole::not_the_cause, before,
                before ? order.why : "the engine answered 409: the box had stopped when the kill reached the engine",
                std::move(record)};
    if (code != k_sigkill_exit_code)
        return {KillRole::not_the_cause, before,
                before ? order.why
                       : "a box ended by SIGKILL reports exit code 137, and this one reported " + std::to_string(code),
                std::move(record)};
    if (before) return {KillRole::not_the_cause, true, std::move(order.why), std::move(record)};
    if (*evidence.kill == KillAnswer::accepted && evidence.engine_state->kill_acknowledged == true && !oom_seen) {
        record["kill_acknowledgement"] = evidence.engine_state->kill_acknowledgement_record;
        return {KillRole::ended_it, false, {}, std::move(record)};
    }
    if (*evidence.kill == KillAnswer::failed)
        return {KillRole::undecided, false,
                "the kill request got no clear answer from the engine, and exit code 137 is also what a program can "
                "report by itself",
                std::move(record)};
    if (order.order == Order::not_compared)
        order.why = "exit code 137 is also what a program can report by itself, and the box's end could not be placed "
                    "before or after the kill: " +
                    order.why;
    return {KillRole::undecided, false, std::move(order.why), std::move(record)};
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

void classify_by_engine(const EndEvidence& evidence, bool oom_seen, const std::string& oom_reporter,
                        const json::object& state_evidence, EndVerdict& verdict)
{
    auto& termination = verdict.termination;
    const std::int64_t code = *termination.exit_code;
    auto note_oom_in_box = [&](std::string what_followed) {
        verdict.explanations.push_back(explain("OOM_KILL_IN_BOX",
                                               "A process in the box was killed by the kernel for memory (" +
                                                   oom_reporter + "), " + std::move(what_followed),
                                               state_evidence));
    };

    KillFinding kill = judge_kill(evidence, code, evidence.engine_state->finished_at_ns, oom_seen);
    if (kill.role == KillRole::ended_it) {
        termination.signal = k_sigkill;
        termination.signal_source = SignalSource::pybox_kill;
        const std::string how = "the program was still running when PyBox sent SIGKILL, the engine accepted it, the "
                                "box's first process recorded that kill's one-time nonce, which the program never "
                                "sees, before it sent SIGKILL to the program (the container's termination message), "
                                "and the box ended with exit code 137, as a box ended by SIGKILL does.";
        if (evidence.client_gone) {
            termination.mechanism = TerminationMechanism::stopped_on_disconnect;
            verdict.explanations.push_back(explain("STOPPED_ON_DISCONNECT",
                                                   "Stopped by PyBox before the deadline because the client went "
                                                   "away: " + how,
                                                   std::move(kill.evidence)));
        } else {
            termination.mechanism = TerminationMechanism::deadline_kill;
            verdict.explanations.push_back(
                explain("DEADLINE_KILL", "Stopped by PyBox at the deadline: " + how, std::move(kill.evidence)));
        }
        return;
    }
    if (kill.role == KillRole::undecided) {
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
        return;
    }

    // The box ended by itself: the program's exit, or an OOM kill.
    if (oom_seen && code == k_sigkill_exit_code) {
        termination.mechanism = TerminationMechanism::out_of_memory;
        verdict.explanations.push_back(explain("OUT_OF_MEMORY",
                                               "Out of memory: the kernel killed a process in the box at its "
                                               "memory limit (" +
                                                   oom_reporter + "), and the box ended with exit code 137.",
                                               state_evidence));
        verdict.unknown.emplace_back("signal", "which process the OOM killer chose is not known without the kernel's "
                                               "record of the program's end: the program may have exited with 137 "
                                               "itself after another process in the box was killed");
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
    if (kill.role != KillRole::not_the_cause) return;
    if (kill.ended_before_send) {
        verdict.explanations.push_back(explain("ENDED_BEFORE_KILL",
                                               "PyBox sent SIGKILL " + kill_occasion(evidence) +
                                                   ", but the box had already ended by itself: " + kill.why + ".",
                                               std::move(kill.evidence)));
    } else {
        verdict.explanations.push_back(explain("ENDED_BEFORE_KILL_ARRIVED",
                                               "PyBox sent SIGKILL " + kill_occasion(evidence) +
                                                   ", and the box ended by itself before the kill reached it: " +
                                                   kill.why + "; whether that was before the kill was sent is not "
                                                   "known.",
                                               std::move(kill.evidence)));
    }
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
    const auto* kernel = evidence.kernel;
    if (kernel != nullptr && kernel->program) termination.program_end = end_record(*kernel->program, evidence);
    if (kernel != nullptr && kernel->first) termination.box_end = end_record(*kernel->first, evidence);
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

    if (kernel != nullptr && kernel->program && kernel->first) {
        KernelRules(evidence, {*kernel->program, *kernel->first}, oom_seen, state_evidence, verdict).decide();
        return verdict;
    }
    std::string unread = evidence.kernel_unread;
    if (kernel != nullptr)
        unread = kernel->events_lost ? "the kernel dropped process events while the box ran"
                 : !kernel->first    ? "the kernel's record of the box's first process was not found"
                                     : "the kernel's record of the program's end was not found";
    if (unread.empty()) unread = "the kernel's record of the program's end was not read";
    verdict.unknown.emplace_back("program_end", unread + "; how the program ended rests on the engine's report alone");
    classify_by_engine(evidence, oom_seen, engine_oom ? "reported by the engine" : "counted by the kernel",
                       state_evidence, verdict);
    return verdict;
}

}  // namespace pybox::daemon
