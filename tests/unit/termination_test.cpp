#include "daemon/run/termination.hpp"
#include "daemon/engine/docker_facts.hpp"

#include "common/clock.hpp"
#include "tests/support/box_states.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace pybox;
using daemon::KillAnswer;
using proto::SignalSource;
using proto::TerminationMechanism;
using test::engine_state_of;
using test::exited_state;
using test::k_finished_ns;
namespace json = boost::json;

namespace {

// A measured offset of the engine's clock: within +-20 us of the daemon's.
constexpr proto::ClockOffset k_offset{-20'000, 20'000};

daemon::EndEvidence evidence(const engine::BoxState& engine_state)
{
    daemon::EndEvidence evidence;
    evidence.engine_state = &engine_state;
    evidence.wall_timeout_s = 2.0;
    evidence.guest_timer_s = 3.0;
    return evidence;
}

// A kill sent `kill_before_finish_ns` before FinishedAt (negative: after it), with the offset measured.
daemon::EndEvidence killed(const engine::BoxState& engine_state, KillAnswer answer, std::int64_t kill_before_finish_ns)
{
    auto result = evidence(engine_state);
    result.kill = answer;
    result.kill_sent_unix_ns = k_finished_ns - kill_before_finish_ns;
    result.engine_clock_offset = k_offset;
    return result;
}

bool has_code(const daemon::EndVerdict& verdict, std::string_view code)
{
    return std::any_of(verdict.explanations.begin(), verdict.explanations.end(),
                       [&](const proto::Explanation& explanation) { return explanation.code == code; });
}

std::string unknown(const daemon::EndVerdict& verdict, std::string_view key)
{
    for (const auto& [name, why] : verdict.unknown)
        if (name == key) return why;
    return {};
}

}  // namespace

TEST_CASE("A program that exits by itself is TARGET_EXIT_OBSERVED with its code")
{
    const auto ended = exited_state(3);
    const auto verdict = daemon::classify_end(evidence(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.exit_code == 3);
    CHECK_FALSE(verdict.termination.signal);
    CHECK_FALSE(verdict.termination.inferred_signal);
    CHECK_FALSE(verdict.termination.deadline_kill_sent);
    CHECK(has_code(verdict, "EXITED"));
}

TEST_CASE("The engine lifetime keeps the nanoseconds of the engine's timestamps")
{
    const auto ended = exited_state(0);
    CHECK(daemon::classify_end(evidence(ended)).termination.engine_lifetime_s == 0.250000001);
}

TEST_CASE("Without the kernel's record, exit 137 with FinishedAt after an accepted kill leaves the cause not established")
{
    // FinishedAt trails the kernel's exit by up to tens of milliseconds: after the kill proves nothing.
    const auto ended = exited_state(137);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK_FALSE(verdict.termination.signal);
    CHECK(verdict.termination.deadline_kill_sent);
    CHECK(verdict.termination.deadline_kill_answer == KillAnswer::accepted);
    CHECK(verdict.termination.deadline_kill_sent_at == "2026-11-29T20:00:05.245000Z");
    CHECK(has_code(verdict, "CAUSE_NOT_ESTABLISHED"));
    CHECK(unknown(verdict, "exact_termination_cause").find("trails the kernel's record") != std::string::npos);
    CHECK(unknown(verdict, "program_end").find("engine's report alone") != std::string::npos);
}

TEST_CASE("Without the kernel's record, exit code 0 after an accepted kill is the program's own end, not placed before the send")
{
    const auto ended = exited_state(0);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.deadline_kill_sent);
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL_ARRIVED"));
    CHECK_FALSE(has_code(verdict, "ENDED_BEFORE_KILL"));
    CHECK(unknown(verdict, "exact_termination_cause").empty());
}

TEST_CASE("Exit 137 with FinishedAt certainly before the kill was sent is the program's own exit")
{
    const auto ended = exited_state(137);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, -1'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK_FALSE(verdict.termination.signal);
    CHECK(verdict.termination.inferred_signal == 9);
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL"));
}

TEST_CASE("Exit 137 with FinishedAt within the clock offset's uncertainty of the kill leaves the cause not established")
{
    const auto ended = exited_state(137);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, 10'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(has_code(verdict, "CAUSE_NOT_ESTABLISHED"));
    CHECK(unknown(verdict, "exact_termination_cause").find("40 microseconds of uncertainty") != std::string::npos);
}

TEST_CASE("Exit 137 after an accepted kill without a measured clock offset leaves the cause not established")
{
    const auto ended = exited_state(137);
    auto input = killed(ended, KillAnswer::accepted, 5'000'000);
    input.engine_clock_offset.reset();
    const auto verdict = daemon::classify_end(input);
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(unknown(verdict, "exact_termination_cause").find("offset") != std::string::npos);
}

TEST_CASE("A kill the engine refused because the box had stopped is the program's own exit, not said to precede the send")
{
    const auto ended = exited_state(0);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::not_running, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.deadline_kill_sent);
    CHECK(verdict.termination.deadline_kill_answer == KillAnswer::not_running);
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL_ARRIVED"));
    CHECK_FALSE(has_code(verdict, "ENDED_BEFORE_KILL"));
}

TEST_CASE("A failed kill request followed by exit 137 after it leaves the cause not established")
{
    const auto ended = exited_state(137);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::failed, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(verdict.termination.deadline_kill_answer == KillAnswer::failed);
    CHECK(verdict.termination.deadline_kill_sent);
}

TEST_CASE("A kill sent because the client went away is not called a deadline kill")
{
    const auto ended = exited_state(137);
    auto input = killed(ended, KillAnswer::accepted, 5'000'000);
    input.client_gone = true;
    const auto verdict = daemon::classify_end(input);
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK_FALSE(verdict.termination.deadline_kill_sent);
    CHECK_FALSE(verdict.termination.deadline_kill_answer);
    CHECK(verdict.explanations.at(0).message.find("because the client went away") != std::string::npos);
}

namespace {

// `state` with the box's first process's record of PyBox's kill read (or found missing), as a
// Kubernetes box's termination message gives it.
engine::BoxState acknowledged(engine::BoxState state, bool acknowledged = true)
{
    state.kill_acknowledged = acknowledged;
    state.kill_acknowledgement_record = {
        {"terminationMessage", acknowledged ? json::value("pybox-kill 0123456789abcdef0123456789abcdef\n") : nullptr},
        {"kill_nonce", "0123456789abcdef0123456789abcdef"}};
    return state;
}

// A kill sent while the box ran, on an engine whose clock offset is not measured (a cluster's).
daemon::EndEvidence killed_on_cluster(const engine::BoxState& engine_state)
{
    auto input = killed(engine_state, KillAnswer::accepted, 5'000'000);
    input.engine_clock_offset.reset();
    return input;
}

}  // namespace

TEST_CASE("Exit 137 after an accepted kill that the box's first process acknowledged is a deadline kill")
{
    const auto ended = acknowledged(exited_state(137));
    const auto verdict = daemon::classify_end(killed_on_cluster(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::deadline_kill);
    proto::Receipt receipt;
    receipt.observed.termination = verdict.termination;
    CHECK(proto::exit_code_for(receipt) == 124);
    CHECK(verdict.termination.exit_code == 137);
    CHECK(verdict.termination.signal == 9);
    CHECK(verdict.termination.signal_source == SignalSource::pybox_kill);
    CHECK_FALSE(verdict.termination.inferred_signal);
    REQUIRE(has_code(verdict, "DEADLINE_KILL"));
    const auto& explanation = verdict.explanations.back();
    CHECK(explanation.message.find("one-time nonce") != std::string::npos);
    CHECK(explanation.message.find("termination message") != std::string::npos);
    CHECK(explanation.message.find("exit code 137") != std::string::npos);
    CHECK(explanation.evidence.at("kill_acknowledgement") == json::value(ended.kill_acknowledgement_record));
    for (const auto& [key, value] : ended.exit_code_record) CHECK(explanation.evidence.at(key) == value);
    CHECK(unknown(verdict, "exact_termination_cause").empty());
}

TEST_CASE("An acknowledged kill sent because the client went away is a stop on disconnect")
{
    const auto ended = acknowledged(exited_state(137));
    auto input = killed_on_cluster(ended);
    input.client_gone = true;
    const auto verdict = daemon::classify_end(input);
    CHECK(verdict.termination.mechanism == TerminationMechanism::stopped_on_disconnect);
    CHECK(verdict.termination.signal_source == SignalSource::pybox_kill);
    CHECK(has_code(verdict, "STOPPED_ON_DISCONNECT"));
    CHECK_FALSE(has_code(verdict, "DEADLINE_KILL"));
    CHECK(unknown(verdict, "exact_termination_cause").empty());
}

TEST_CASE("Exit 137 after a kill the box's first process did not acknowledge leaves the cause not established")
{
    for (const auto& ended : {acknowledged(exited_state(137), false), exited_state(137)}) {
        const auto verdict = daemon::classify_end(killed_on_cluster(ended));
        CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
        CHECK_FALSE(verdict.termination.signal);
        CHECK(has_code(verdict, "CAUSE_NOT_ESTABLISHED"));
        CHECK_FALSE(unknown(verdict, "exact_termination_cause").empty());
    }
}

TEST_CASE("An acknowledged kill with an exit code other than 137 is the program's own end")
{
    const auto ended = acknowledged(exited_state(3));
    const auto verdict = daemon::classify_end(killed_on_cluster(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.exit_code == 3);
    CHECK_FALSE(verdict.termination.signal);
    CHECK(has_code(verdict, "EXITED"));
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL_ARRIVED"));
}

TEST_CASE("An acknowledged kill with an OOM kill seen is not claimed to have ended the box")
{
    const auto ended = acknowledged(exited_state(137, true));
    const auto verdict = daemon::classify_end(killed_on_cluster(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK_FALSE(verdict.termination.signal);
    CHECK(has_code(verdict, "OOM_KILL_IN_BOX"));
    CHECK_FALSE(has_code(verdict, "DEADLINE_KILL"));
}

TEST_CASE("Without the kernel's record, OOMKilled with exit 137 is out of memory without a claim of which process died")
{
    const auto ended = exited_state(137, true);
    const auto verdict = daemon::classify_end(evidence(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::out_of_memory);
    CHECK_FALSE(verdict.termination.signal);
    CHECK_FALSE(verdict.termination.signal_source);
    CHECK(has_code(verdict, "OUT_OF_MEMORY"));
    CHECK(unknown(verdict, "signal").find("which process the OOM killer chose") != std::string::npos);
}

TEST_CASE("OOMKilled while the program exits 0 is the program's own exit with the OOM kill recorded")
{
    const auto ended = exited_state(0, true);
    const auto verdict = daemon::classify_end(evidence(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.exit_code == 0);
    CHECK_FALSE(verdict.termination.signal);
    CHECK(has_code(verdict, "OOM_KILL_IN_BOX"));
    CHECK_FALSE(has_code(verdict, "OUT_OF_MEMORY"));
}

TEST_CASE("The kernel's OOM-kill count is evidence of the OOM explanations")
{
    const auto ended = exited_state(137, true);
    auto input = evidence(ended);
    input.kernel_oom_kills = 2;
    const auto verdict = daemon::classify_end(input);
    REQUIRE(has_code(verdict, "OUT_OF_MEMORY"));
    CHECK(verdict.explanations.at(0).evidence.at("kernel_oom_kills") == 2);
}

TEST_CASE("A kernel OOM-kill count the engine did not report is explained and ends the run as out of memory")
{
    const auto ended = exited_state(137, false);
    auto input = evidence(ended);
    input.kernel_oom_kills = 1;
    const auto verdict = daemon::classify_end(input);
    CHECK(verdict.termination.mechanism == TerminationMechanism::out_of_memory);
    CHECK(has_code(verdict, "OOM_KILL_COUNTED_BY_KERNEL"));
}

TEST_CASE("A kernel OOM-kill count of zero adds nothing")
{
    const auto ended = exited_state(0, false);
    auto input = evidence(ended);
    input.kernel_oom_kills = 0;
    const auto verdict = daemon::classify_end(input);
    CHECK_FALSE(has_code(verdict, "OOM_KILL_COUNTED_BY_KERNEL"));
    CHECK(verdict.explanations.at(0).evidence.at("kernel_oom_kills") == 0);
}

TEST_CASE("Without the kernel's record, an OOM kill in the box and exit 137 after a kill leave the cause not established")
{
    const auto ended = exited_state(137, true);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(has_code(verdict, "OOM_KILL_IN_BOX"));
}

TEST_CASE("sys.exit(137) without a kill is not reported as a signal; the signal is only inferred")
{
    const auto ended = exited_state(137);
    const auto verdict = daemon::classify_end(evidence(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK_FALSE(verdict.termination.signal);
    CHECK_FALSE(verdict.termination.signal_source);
    CHECK(verdict.termination.inferred_signal == 9);
    CHECK(has_code(verdict, "EXIT_CODE_SUGGESTS_SIGNAL"));
    CHECK(unknown(verdict, "signal") ==
          "exit code 137 is what a process killed by signal 9 reports, but the program may have exited with it itself");
}

TEST_CASE("Exit 137 at the box timer is said to reach it, counted from the timer's start (a warm box's delivery)")
{
    // The box lived 0.25 s; with a 0.2 s box timer a cold box reached it.
    const auto ended = exited_state(137);
    auto cold = evidence(ended);
    cold.guest_timer_s = 0.2;
    const auto reached = daemon::classify_end(cold);
    REQUIRE(has_code(reached, "EXIT_CODE_SUGGESTS_SIGNAL"));
    const auto explained = [](const daemon::EndVerdict& verdict) {
        for (const auto& explanation : verdict.explanations)
            if (explanation.code == "EXIT_CODE_SUGGESTS_SIGNAL") return explanation;
        return proto::Explanation{};
    };
    CHECK(explained(reached).message.find("reached the box timer") != std::string::npos);
    // A warm box that waited 0.2 s of those 0.25 s for its program ran 0.05 s on its timer.
    auto warm = cold;
    warm.timer_delay_s = 0.2;
    const auto short_of_it = daemon::classify_end(warm);
    REQUIRE(has_code(short_of_it, "EXIT_CODE_SUGGESTS_SIGNAL"));
    CHECK(explained(short_of_it).message.find("box timer") == std::string::npos);
    CHECK(short_of_it.termination.engine_lifetime_s == reached.termination.engine_lifetime_s);
}

TEST_CASE("No final engine state means the end was not observed")
{
    daemon::EndEvidence input;
    const auto verdict = daemon::classify_end(input);
    CHECK(verdict.termination.mechanism == TerminationMechanism::engine_lost);
    CHECK_FALSE(verdict.termination.exit_code);
    CHECK(has_code(verdict, "ENGINE_STATE_UNREAD"));
}

TEST_CASE("A box still running after the run is EXIT_NOT_OBSERVED")
{
    const auto running = engine_state_of({{"Status", "running"}, {"Running", true}, {"ExitCode", 0}});
    const auto verdict = daemon::classify_end(evidence(running));
    CHECK(verdict.termination.mechanism == TerminationMechanism::engine_lost);
    CHECK(has_code(verdict, "EXIT_NOT_OBSERVED"));
}

TEST_CASE("Engine timestamps parse to nanoseconds, with zone offsets; bad ones and the zero time give nothing")
{
    CHECK(parse_rfc3339_ns("1970-01-01T00:00:01.5Z") == std::nullopt);  // before 1971
    CHECK(*parse_rfc3339_ns("2026-11-29T20:00:06.35Z") - *parse_rfc3339_ns("2026-11-29T20:00:05.1Z") ==
          1'250'000'000);
    CHECK(parse_rfc3339_ns("2026-11-29T21:00:05.123456789+01:00") == parse_rfc3339_ns("2026-11-29T20:00:05.123456789Z"));
    CHECK(parse_rfc3339_ns("2026-11-29T20:00:05Z").has_value());
    CHECK_FALSE(parse_rfc3339_ns("0001-01-01T00:00:00Z"));
    CHECK_FALSE(parse_rfc3339_ns("garbage"));
    CHECK_FALSE(parse_rfc3339_ns("2026-11-29T20:00:05.1234567891Z"));
    CHECK_FALSE(parse_rfc3339_ns("2026-11-29T20:00:05."));
}

// ---- With the kernel's record of the program's and the box's ends ----

namespace {

constexpr std::int64_t k_delivered_ns = 1'000'000'000;
constexpr std::int64_t k_kill_sent_ns = k_delivered_ns + 2'000'000'000;  // a 2 s deadline
constexpr std::uint32_t k_killed_by_sigkill = 9;

constexpr std::uint32_t exit_status(int code) { return static_cast<std::uint32_t>(code) << 8; }

// A run whose kernel record has the program ending with `program` at `program_ns` and the box's
// first process with `box` at `box_ns`; PyBox's kill sent at k_kill_sent_ns when `answer` is set.
struct KernelRun {
    engine::BoxState state;
    watcher::FollowedEnds ends;
    daemon::EndEvidence input;

    KernelRun(std::uint32_t program, std::int64_t program_ns, std::uint32_t box, std::int64_t box_ns,
              std::optional<KillAnswer> answer, int engine_code, bool oom = false)
        : state(exited_state(engine_code, oom))
    {
        ends.first = watcher::ProcExit{100, box, box_ns};
        ends.program_pid = 101;
        ends.program = watcher::ProcExit{101, program, program_ns};
        input = evidence(state);
        input.kernel = &ends;
        input.delivered_mono_ns = k_delivered_ns;
        input.kill = answer;
        if (answer) {
            input.kill_sent_mono_ns = k_kill_sent_ns;
            input.kill_sent_unix_ns = k_finished_ns;
        }
    }
    daemon::EndVerdict verdict() const { return daemon::classify_end(input); }
};

int exec_exit_code(const daemon::EndVerdict& verdict)
{
    proto::Receipt receipt;
    receipt.observed.termination = verdict.termination;
    return proto::exit_code_for(receipt);
}

}  // namespace

TEST_CASE("A program that exits 137 by itself just before the kill is its own exit, whatever the engine reports")
{
    // os._exit(137) 7.5 ms before PyBox sent the kill; the engine's FinishedAt came later.
    const KernelRun run(exit_status(137), k_kill_sent_ns - 7'500'000, exit_status(137), k_kill_sent_ns - 7'400'000,
                        KillAnswer::accepted, 137);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.exit_code == 137);
    CHECK_FALSE(verdict.termination.signal);
    CHECK_FALSE(verdict.termination.inferred_signal);
    CHECK(has_code(verdict, "EXITED"));
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL"));
    CHECK_FALSE(has_code(verdict, "DEADLINE_KILL"));
    CHECK(exec_exit_code(verdict) == 137);
    REQUIRE(verdict.termination.program_end);
    CHECK(verdict.termination.program_end->source == "kernel_proc_connector");
    CHECK(verdict.termination.program_end->exit_code == 137);
    CHECK(verdict.termination.program_end->since_kill_sent_s == Approx(-0.0075));
    CHECK(verdict.termination.program_end->since_delivery_s == Approx(1.9925));
}

TEST_CASE("A program that exited 0 before its box was killed is an exit 0, and the box's end is recorded apart")
{
    // The interpreter had exited; the kill reached the first process before it passed the status on.
    const KernelRun run(exit_status(0), k_kill_sent_ns - 1'000'000, k_killed_by_sigkill, k_kill_sent_ns + 15'000'000,
                        KillAnswer::accepted, 137);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.exit_code == 0);
    CHECK(exec_exit_code(verdict) == 0);
    REQUIRE(verdict.termination.box_end);
    CHECK(verdict.termination.box_end->signal == 9);
    CHECK_FALSE(verdict.termination.box_end->exit_code);
    CHECK(verdict.termination.program_end->exit_code == 0);
}

TEST_CASE("A program that ends by itself after the kill was sent is said to end before the kill arrived, not before it was sent")
{
    const KernelRun run(exit_status(3), k_kill_sent_ns + 20'000'000, exit_status(3), k_kill_sent_ns + 20'100'000,
                        KillAnswer::accepted, 3);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL_ARRIVED"));
    CHECK_FALSE(has_code(verdict, "ENDED_BEFORE_KILL"));
    CHECK(exec_exit_code(verdict) == 3);
}

TEST_CASE("The kernel's record of the box and the program killed by SIGKILL after an accepted kill is a deadline kill")
{
    const KernelRun run(k_killed_by_sigkill, k_kill_sent_ns + 12'000'000, k_killed_by_sigkill,
                        k_kill_sent_ns + 12'100'000, KillAnswer::accepted, 137);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::deadline_kill);
    CHECK(verdict.termination.signal == 9);
    CHECK(verdict.termination.signal_source == SignalSource::pybox_kill);
    CHECK(has_code(verdict, "DEADLINE_KILL"));
    CHECK(exec_exit_code(verdict) == 124);
    CHECK(verdict.explanations.at(0).evidence.at("box_end_minus_kill_sent_ns") == 12'100'000);
}

TEST_CASE("The kernel's record of a kill sent because the client went away is a stop on disconnect")
{
    KernelRun run(k_killed_by_sigkill, k_kill_sent_ns + 12'000'000, k_killed_by_sigkill, k_kill_sent_ns + 12'100'000,
                  KillAnswer::accepted, 137);
    run.input.client_gone = true;
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::stopped_on_disconnect);
    CHECK(verdict.termination.signal_source == SignalSource::pybox_kill);
    CHECK_FALSE(verdict.termination.deadline_kill_sent);
}

TEST_CASE("A box killed after the send with an OOM kill counted leaves the cause not established")
{
    const KernelRun run(k_killed_by_sigkill, k_kill_sent_ns + 5'000'000, k_killed_by_sigkill,
                        k_kill_sent_ns + 5'100'000, KillAnswer::accepted, 137, true);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(unknown(verdict, "exact_termination_cause").find("OOM kill") != std::string::npos);
    CHECK(exec_exit_code(verdict) == 137);
}

TEST_CASE("A box killed after a kill request with no clear answer leaves the cause not established")
{
    const KernelRun run(k_killed_by_sigkill, k_kill_sent_ns + 5'000'000, k_killed_by_sigkill,
                        k_kill_sent_ns + 5'100'000, KillAnswer::failed, 137);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(has_code(verdict, "CAUSE_NOT_ESTABLISHED"));
}

TEST_CASE("A child's OOM kill then the program's own exit 137 is the program's exit with the OOM kill recorded")
{
    const KernelRun run(exit_status(137), k_delivered_ns + 300'000'000, exit_status(137), k_delivered_ns + 300'100'000,
                        std::nullopt, 137, true);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.exit_code == 137);
    CHECK_FALSE(verdict.termination.signal);
    CHECK(has_code(verdict, "OOM_KILL_IN_BOX"));
    CHECK_FALSE(has_code(verdict, "OUT_OF_MEMORY"));
    CHECK(exec_exit_code(verdict) == 137);
}

TEST_CASE("The program killed by SIGKILL with an OOM kill counted and the first process outliving it is out of memory")
{
    const KernelRun run(k_killed_by_sigkill, k_delivered_ns + 300'000'000, exit_status(137),
                        k_delivered_ns + 300'100'000, std::nullopt, 137, true);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::out_of_memory);
    CHECK(verdict.termination.signal == 9);
    CHECK(verdict.termination.signal_source == SignalSource::oom_kill);
    CHECK(exec_exit_code(verdict) == 137);
}

TEST_CASE("The program killed by SIGKILL once its life reached the box timer is the box timer's kill")
{
    // guest timer 3 s from delivery; PyBox's own kill was never sent (the engine was gone).
    const KernelRun run(k_killed_by_sigkill, k_delivered_ns + 3'000'500'000, exit_status(137),
                        k_delivered_ns + 3'000'600'000, std::nullopt, 137);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::deadline_kill);
    CHECK(verdict.termination.signal_source == SignalSource::box_timer);
    CHECK(has_code(verdict, "BOX_TIMER_KILL"));
    CHECK(exec_exit_code(verdict) == 124);
}

TEST_CASE("The program killed by SIGKILL early with its first process outliving it was killed from inside the box")
{
    // os.kill(os.getpid(), 9): no OOM kill, far from the timer, no kill sent.
    const KernelRun run(k_killed_by_sigkill, k_delivered_ns + 100'000'000, exit_status(137),
                        k_delivered_ns + 100'100'000, std::nullopt, 137);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.signal == 9);
    CHECK(verdict.termination.signal_source == SignalSource::wait_status);
    CHECK(has_code(verdict, "KILLED_BY_SIGNAL"));
    CHECK_FALSE(unknown(verdict, "signal").empty());
    CHECK(exec_exit_code(verdict) == 137);
}

TEST_CASE("A program ended by SIGSEGV is killed by signal 11, whoever sent it, and a later kill did not end it")
{
    const KernelRun run(11, k_kill_sent_ns - 50'000'000, exit_status(139), k_kill_sent_ns - 49'000'000,
                        KillAnswer::not_running, 139);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.signal == 11);
    CHECK(has_code(verdict, "KILLED_BY_SIGNAL"));
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL"));
    CHECK(exec_exit_code(verdict) == 139);
}

TEST_CASE("A box whose first process was killed by SIGKILL with no kill sent and no OOM leaves the cause not established")
{
    const KernelRun run(k_killed_by_sigkill, k_delivered_ns + 100'000'000, k_killed_by_sigkill,
                        k_delivered_ns + 100'100'000, std::nullopt, 137);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(unknown(verdict, "exact_termination_cause").find("outside the box") != std::string::npos);
}

TEST_CASE("A kernel record without the program's end falls back to the engine's report and says why")
{
    KernelRun run(exit_status(0), 0, exit_status(0), k_delivered_ns, std::nullopt, 0);
    run.ends.program.reset();
    run.ends.events_lost = true;
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK_FALSE(verdict.termination.program_end);
    CHECK(verdict.termination.box_end);
    CHECK(unknown(verdict, "program_end").find("dropped process events") != std::string::npos);
}

TEST_CASE("Without a kernel record the receipt says why the program's end rests on the engine's report")
{
    const auto ended = exited_state(0);
    auto input = evidence(ended);
    input.kernel_unread = "the kernel's proc connector refused the subscription";
    const auto verdict = daemon::classify_end(input);
    CHECK(unknown(verdict, "program_end").find("refused the subscription") != std::string::npos);
    CHECK_FALSE(verdict.termination.program_end);
}

TEST_CASE("The box's first process and the program killed by SIGKILL with an OOM kill counted and no kill sent is out of memory, saying the first process died too")
{
    const KernelRun run(k_killed_by_sigkill, k_delivered_ns + 100'000'000, k_killed_by_sigkill,
                        k_delivered_ns + 100'100'000, std::nullopt, 137, true);
    const auto verdict = run.verdict();
    CHECK(verdict.termination.mechanism == TerminationMechanism::out_of_memory);
    CHECK(verdict.termination.signal_source == SignalSource::oom_kill);
    REQUIRE_FALSE(verdict.explanations.empty());
    const auto& message = verdict.explanations.back().message;
    CHECK(message.find("first process was killed by SIGKILL too") != std::string::npos);
    CHECK(message.find("outlived") == std::string::npos);
}
