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

TEST_CASE("An accepted kill followed by exit 137 after the kill was sent is a deadline kill by SIGKILL")
{
    const auto ended = exited_state(137);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::deadline_kill);
    CHECK(verdict.termination.signal == 9);
    CHECK(verdict.termination.signal_source == SignalSource::pybox_kill);
    CHECK(verdict.termination.deadline_kill_sent);
    CHECK(verdict.termination.deadline_kill_answer == KillAnswer::accepted);
    CHECK(verdict.termination.deadline_kill_sent_at == "2026-11-29T20:00:05.245000Z");
    CHECK(has_code(verdict, "DEADLINE_KILL"));
}

TEST_CASE("An accepted kill with exit code 0 is the program's own exit, recorded as ended before the kill")
{
    const auto ended = exited_state(0);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.deadline_kill_sent);
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL"));
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

TEST_CASE("A kill the engine refused because the box had stopped is the program's own exit and still a sent kill")
{
    const auto ended = exited_state(0);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::not_running, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.deadline_kill_sent);
    CHECK(verdict.termination.deadline_kill_answer == KillAnswer::not_running);
    CHECK(has_code(verdict, "ENDED_BEFORE_KILL"));
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
    CHECK(verdict.termination.mechanism == TerminationMechanism::stopped_on_disconnect);
    CHECK(verdict.termination.signal_source == SignalSource::pybox_kill);
    CHECK_FALSE(verdict.termination.deadline_kill_sent);
    CHECK_FALSE(verdict.termination.deadline_kill_answer);
}

TEST_CASE("OOMKilled with exit 137 is an out-of-memory end by the OOM killer's SIGKILL")
{
    const auto ended = exited_state(137, true);
    const auto verdict = daemon::classify_end(evidence(ended));
    CHECK(verdict.termination.mechanism == TerminationMechanism::out_of_memory);
    CHECK(verdict.termination.signal == 9);
    CHECK(verdict.termination.signal_source == SignalSource::oom_kill);
    CHECK(has_code(verdict, "OUT_OF_MEMORY"));
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

TEST_CASE("An OOM kill in the box followed by an established deadline kill is a deadline kill")
{
    const auto ended = exited_state(137, true);
    const auto verdict = daemon::classify_end(killed(ended, KillAnswer::accepted, 5'000'000));
    CHECK(verdict.termination.mechanism == TerminationMechanism::deadline_kill);
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
