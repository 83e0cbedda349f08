#include "daemon/run/termination.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace pybox;
using daemon::KillAnswer;
using proto::TerminationMechanism;
namespace json = boost::json;

namespace {

json::value state(int exit_code, bool oom = false)
{
    return json::object{{"Status", "exited"},
                        {"Running", false},
                        {"ExitCode", exit_code},
                        {"OOMKilled", oom},
                        {"StartedAt", "2026-11-29T20:00:05.000000000Z"},
                        {"FinishedAt", "2026-11-29T20:00:05.250000000Z"}};
}

daemon::EndVerdict classify(const json::value& engine_state, KillAnswer kill)
{
    return daemon::classify_end({&engine_state, kill, true, 2.0, 3.0});
}

}  // namespace

TEST_CASE("A program that exits by itself is TARGET_EXIT_OBSERVED with its code")
{
    const auto verdict = classify(state(3), KillAnswer::not_sent);
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.exit_code == 3);
    CHECK_FALSE(verdict.termination.signal);
    CHECK(verdict.termination.engine_lifetime_s == Approx(0.25));
}

TEST_CASE("An accepted deadline kill followed by exit 137 is a deadline kill")
{
    const auto verdict = classify(state(137), KillAnswer::accepted);
    CHECK(verdict.termination.mechanism == TerminationMechanism::deadline_kill);
    CHECK(verdict.termination.deadline_kill_sent);
    CHECK(verdict.termination.signal == 9);
}

TEST_CASE("An accepted kill with the program's own exit code leaves the cause not established")
{
    const auto verdict = classify(state(0), KillAnswer::accepted);
    CHECK(verdict.termination.mechanism == TerminationMechanism::cause_not_established);
    REQUIRE_FALSE(verdict.unknown.empty());
    CHECK(verdict.unknown[0].first == "exact_termination_cause");
}

TEST_CASE("A kill the engine refused because the box had stopped counts as the program's own exit")
{
    CHECK(classify(state(0), KillAnswer::not_running).termination.mechanism ==
          TerminationMechanism::target_exit_observed);
}

TEST_CASE("A kill sent because the client went away is not called a deadline kill")
{
    const json::value ended = state(137);
    const auto verdict = daemon::classify_end({&ended, KillAnswer::accepted, true, 2.0, 3.0, true});
    CHECK(verdict.termination.mechanism == TerminationMechanism::stopped_on_disconnect);
    CHECK_FALSE(verdict.termination.deadline_kill_sent);
}

TEST_CASE("OOMKilled from the engine is an out-of-memory end")
{
    const auto verdict = classify(state(137, true), KillAnswer::not_sent);
    CHECK(verdict.termination.mechanism == TerminationMechanism::out_of_memory);
    CHECK(verdict.explanations.at(0).code == "OUT_OF_MEMORY");
}

TEST_CASE("A signal PyBox did not send is reported with the cause left unknown")
{
    const auto verdict = classify(state(139), KillAnswer::not_sent);
    CHECK(verdict.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(verdict.termination.signal == 11);
    CHECK(verdict.explanations.at(0).code == "ENDED_BY_SIGNAL");
}

TEST_CASE("No final engine state means the end was not observed")
{
    const auto verdict = daemon::classify_end({nullptr, KillAnswer::not_sent, false, 2.0, 3.0});
    CHECK(verdict.termination.mechanism == TerminationMechanism::engine_lost);
    CHECK_FALSE(verdict.termination.exit_code);
}

TEST_CASE("Engine timestamps with nanoseconds give the lifetime; bad ones give nothing")
{
    CHECK(*daemon::seconds_between_timestamps("2026-11-29T20:00:05.1Z", "2026-11-29T20:00:06.35Z") == Approx(1.25));
    CHECK_FALSE(daemon::seconds_between_timestamps("0001-01-01T00:00:00Z", "2026-11-29T20:00:06Z"));
    CHECK_FALSE(daemon::seconds_between_timestamps("garbage", "2026-11-29T20:00:06Z"));
    CHECK_FALSE(daemon::seconds_between_timestamps("2026-11-29T20:00:07Z", "2026-11-29T20:00:06Z"));
}
