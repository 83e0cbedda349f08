// Deciding how a run ended from what was observed: the final engine state, the kill PyBox sent
// (when, and what the engine answered), the measured offset of the engine's clock, and the
// kernel's OOM-kill counter. Pure, so every branch is unit tested.
//
// The rules never claim more than the evidence:
// - A SIGKILL that reaches the box's first process ends the box with exit code 137. Any other
//   exit code after a kill means the program ended by itself (ENDED_BEFORE_KILL).
// - Exit code 137 after an accepted kill is PyBox's kill only when the engine's FinishedAt,
//   moved onto the daemon's clock by the measured offset, is certainly after the kill was sent;
//   certainly before means the program ended by itself; anything else is CAUSE_NOT_ESTABLISHED
//   with the exact reason in unknown.exact_termination_cause.
// - A signal is reported (`signal`, `signal_source`) only when something observed it: PyBox's
//   accepted kill, or an OOM kill reported by the engine or the kernel. An exit code of 129-159
//   is otherwise only a hint (`inferred_signal`, with the doubt in unknown.signal): the box's
//   first process, GNU timeout as PID 1, turns its child's signal death into exit code 128 + n.
//   Exit code 137 after a lifetime that reached the box timer (counted from the timer's start:
//   a warm box's delivery) says the timer may have sent it.
// - OOMKilled (or a kernel OOM-kill count) says some process in the box was OOM-killed, not
//   which: it ends the run as OUT_OF_MEMORY only with exit code 137; otherwise the program's own
//   end stands and OOM_KILL_IN_BOX records the kill.
#pragma once

#include "daemon/engine/box_engine.hpp"
#include "proto/receipt.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pybox::daemon {

using proto::KillAnswer;

struct EndEvidence {
    const engine::BoxState* engine_state = nullptr;  // the final inspect's; null or not reported = unread
    std::optional<KillAnswer> kill;                     // PyBox's POST /kill; nullopt = none sent
    std::optional<std::int64_t> kill_sent_unix_ns;      // daemon wall clock right before the kill was sent
    std::optional<proto::ClockOffset> engine_clock_offset;  // engine - daemon wall clock; nullopt = not measured
    std::optional<std::int64_t> kernel_oom_kills;        // the box's oom_kill counter; nullopt = not read
    double wall_timeout_s = 0;
    double guest_timer_s = 0;
    // How long after the box's start its timer began: a warm box's wait for its program (its
    // timer starts at delivery), 0 for a cold box.
    double timer_delay_s = 0;
    bool client_gone = false;  // the kill was sent because the client disconnected
};

struct EndVerdict {
    proto::Termination termination;
    std::vector<proto::Explanation> explanations;
    std::vector<std::pair<std::string, std::string>> unknown;  // key -> why
};

EndVerdict classify_end(const EndEvidence& evidence);

}  // namespace pybox::daemon
