// Deciding how a run ended from what was observed: the final engine state, whether PyBox
// sent the deadline kill and what the engine answered. Pure, so every branch is unit tested.
// The rule never claims more than the evidence: a kill that the engine accepted followed by
// exit code 137 is a deadline kill; a kill accepted while the exit code says the program
// ended on its own is "cause not established".
#pragma once

#include "proto/receipt.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::daemon {

enum class KillAnswer { not_sent, accepted, not_running, failed };

struct EndEvidence {
    const boost::json::value* engine_state = nullptr;  // State object of the final inspect
    KillAnswer kill = KillAnswer::not_sent;
    bool wait_observed_exit = false;  // the wait call reported the exit
    double wall_timeout_s = 0;
    double guest_timer_s = 0;
    bool client_gone = false;  // the kill was sent because the client disconnected
};

struct EndVerdict {
    proto::Termination termination;
    std::vector<proto::Explanation> explanations;
    std::vector<std::pair<std::string, std::string>> unknown;  // key -> why
};

EndVerdict classify_end(const EndEvidence& evidence);

// Seconds between two RFC 3339 timestamps of the same clock (e.g. the engine's StartedAt and
// FinishedAt, with nanoseconds); nullopt when either does not parse or the order is wrong.
std::optional<double> seconds_between_timestamps(std::string_view from, std::string_view to);

}  // namespace pybox::daemon
