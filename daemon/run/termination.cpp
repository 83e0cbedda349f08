#include "daemon/run/termination.hpp"

#include <boost/json/object.hpp>

#include <charconv>
#include <ctime>

namespace pybox::daemon {

namespace json = boost::json;
using proto::TerminationMechanism;

namespace {

std::optional<std::int64_t> int_field(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    if (value == nullptr || !value->is_int64()) return std::nullopt;
    return value->as_int64();
}

bool bool_field(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    return value != nullptr && value->is_bool() && value->as_bool();
}

std::string string_field(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

bool parse_digits(std::string_view text, std::size_t at, std::size_t count, int& out)
{
    if (at + count > text.size()) return false;
    const auto* first = text.data() + at;
    auto [end, ec] = std::from_chars(first, first + count, out);
    return ec == std::errc() && end == first + count;
}

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction]Z" into seconds since the epoch.
std::optional<double> parse_timestamp(std::string_view text)
{
    std::tm parts{};
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
        text[16] != ':' || !parse_digits(text, 0, 4, year) || !parse_digits(text, 5, 2, month) ||
        !parse_digits(text, 8, 2, day) || !parse_digits(text, 11, 2, hour) ||
        !parse_digits(text, 14, 2, minute) || !parse_digits(text, 17, 2, second))
        return std::nullopt;
    if (year < 1971) return std::nullopt;  // the engine's zero time means "never"
    std::size_t at = 19;
    double fraction = 0;
    if (at < text.size() && text[at] == '.') {
        double scale = 0.1;
        ++at;
        while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
            fraction += (text[at] - '0') * scale;
            scale /= 10;
            ++at;
        }
    }
    if (at + 1 != text.size() || text[at] != 'Z') return std::nullopt;
    parts.tm_year = year - 1900;
    parts.tm_mon = month - 1;
    parts.tm_mday = day;
    parts.tm_hour = hour;
    parts.tm_min = minute;
    parts.tm_sec = second;
    return static_cast<double>(timegm(&parts)) + fraction;
}

proto::Explanation explain(std::string code, std::string message, json::object evidence)
{
    return proto::Explanation{std::move(code), std::move(message), std::move(evidence)};
}

}  // namespace

std::optional<double> seconds_between_timestamps(std::string_view from, std::string_view to)
{
    const auto start = parse_timestamp(from);
    const auto end = parse_timestamp(to);
    if (!start || !end || *end < *start) return std::nullopt;
    return *end - *start;
}

EndVerdict classify_end(const EndEvidence& evidence)
{
    EndVerdict verdict;
    auto& termination = verdict.termination;
    termination.deadline_kill_sent =
        !evidence.client_gone && (evidence.kill == KillAnswer::accepted || evidence.kill == KillAnswer::failed);

    const json::object* state = evidence.engine_state ? evidence.engine_state->if_object() : nullptr;
    if (state == nullptr) {
        termination.mechanism = TerminationMechanism::engine_lost;
        verdict.explanations.push_back(explain("ENGINE_STATE_UNREAD",
                                               "The engine did not report the box's final state, so how the "
                                               "program ended is not known.",
                                               {{"kill_sent", termination.deadline_kill_sent}}));
        verdict.unknown.emplace_back("exact_termination_cause", "the final engine state could not be read");
        verdict.unknown.emplace_back("exit_code", "the final engine state could not be read");
        return verdict;
    }

    const bool running = bool_field(*state, "Running");
    termination.exit_code = running ? std::nullopt : int_field(*state, "ExitCode");
    if (termination.exit_code && *termination.exit_code > 128 && *termination.exit_code < 160)
        termination.signal = static_cast<int>(*termination.exit_code - 128);
    termination.engine_lifetime_s =
        seconds_between_timestamps(string_field(*state, "StartedAt"), string_field(*state, "FinishedAt"));

    const json::object state_evidence{{"Status", string_field(*state, "Status")},
                                      {"ExitCode", termination.exit_code ? json::value(*termination.exit_code)
                                                                         : json::value(nullptr)},
                                      {"OOMKilled", bool_field(*state, "OOMKilled")}};

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

    if (bool_field(*state, "OOMKilled")) {
        termination.mechanism = TerminationMechanism::out_of_memory;
        verdict.explanations.push_back(explain("OUT_OF_MEMORY",
                                               "Out of memory: the engine reported that the kernel killed the "
                                               "program at the box's memory limit.",
                                               state_evidence));
        return verdict;
    }

    const std::int64_t code = *termination.exit_code;
    if (evidence.client_gone && evidence.kill == KillAnswer::accepted && code == 137) {
        termination.mechanism = TerminationMechanism::stopped_on_disconnect;
        verdict.explanations.push_back(explain(
            "STOPPED_ON_DISCONNECT",
            "Stopped by PyBox before the deadline because the client went away: PyBox sent SIGKILL and "
            "the box ended with exit code 137.",
            {{"kill_answer", "accepted"}, {"ExitCode", code}}));
        return verdict;
    }
    switch (evidence.kill) {
    case KillAnswer::accepted:
        if (code == 137) {
            termination.mechanism = TerminationMechanism::deadline_kill;
            verdict.explanations.push_back(explain(
                "DEADLINE_KILL",
                "Stopped by PyBox at the deadline: the program was still running, PyBox sent SIGKILL and "
                "the box ended with exit code 137.",
                {{"wall_timeout_s", evidence.wall_timeout_s}, {"kill_answer", "accepted"}, {"ExitCode", code}}));
        } else {
            termination.mechanism = TerminationMechanism::cause_not_established;
            verdict.explanations.push_back(explain(
                "CAUSE_NOT_ESTABLISHED",
                "PyBox sent SIGKILL at the deadline while the program was ending with its own exit code; "
                "which came first cannot be established.",
                {{"wall_timeout_s", evidence.wall_timeout_s}, {"kill_answer", "accepted"}, {"ExitCode", code}}));
            verdict.unknown.emplace_back("exact_termination_cause",
                                         "the deadline kill and the program's own exit happened together");
        }
        return verdict;
    case KillAnswer::failed:
        termination.mechanism = TerminationMechanism::cause_not_established;
        verdict.explanations.push_back(explain(
            "CAUSE_NOT_ESTABLISHED",
            "The deadline passed and PyBox's kill request got no clear answer from the engine; the box "
            "ended, but what ended it cannot be established.",
            {{"wall_timeout_s", evidence.wall_timeout_s}, {"kill_answer", "failed"}, {"ExitCode", code}}));
        verdict.unknown.emplace_back("exact_termination_cause", "the kill request failed");
        return verdict;
    case KillAnswer::not_running:
    case KillAnswer::not_sent:
        break;
    }

    termination.mechanism = TerminationMechanism::target_exit_observed;
    if (termination.signal) {
        json::object signal_evidence = state_evidence;
        signal_evidence["signal"] = *termination.signal;
        std::string message = "The program ended on signal " + std::to_string(*termination.signal) +
                              " that PyBox did not send.";
        if (*termination.signal == 9 && termination.engine_lifetime_s &&
            *termination.engine_lifetime_s >= evidence.guest_timer_s - 0.05) {
            message += " Its lifetime reached the box timer, which may have sent it.";
            signal_evidence["guest_timer_s"] = evidence.guest_timer_s;
        }
        verdict.explanations.push_back(explain("ENDED_BY_SIGNAL", std::move(message), std::move(signal_evidence)));
        verdict.unknown.emplace_back("exact_termination_cause",
                                     "the engine reports the exit code only, not who sent the signal");
    } else {
        verdict.explanations.push_back(explain("EXITED", "The program ended by itself with exit code " +
                                                             std::to_string(code) + ".",
                                               state_evidence));
    }
    return verdict;
}

}  // namespace pybox::daemon
