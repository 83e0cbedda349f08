// Deciding how a run ended from what was observed: what this host's kernel recorded of the
// program's and the box's ends (when the daemon could read it: watcher/process_ends.hpp), the
// final engine state, the kill PyBox sent (when, and what the engine answered), the measured
// offset of the engine's clock, and the kernel's OOM-kill counter. Pure, so every branch is unit
// tested.
//
// The rules never claim more than the evidence:
// - The kernel's record decides when it has both ends. The program's (the interpreter's) wait
//   status tells an exit with a code from a death by a signal, and its time is on the daemon's
//   own monotonic clock, so it is ordered against the moment PyBox sent its kill exactly. A
//   program that exited, or died by a signal other than SIGKILL, ended by itself, whatever the
//   box did after. A SIGKILL is PyBox's only when the box's first process, which nothing inside
//   the box can kill, was itself killed by SIGKILL after the kill was sent, the engine accepted
//   the kill, and no OOM kill was counted; the OOM killer's when one was counted and the first
//   process outlived the program; the box timer's when the first process outlived the program
//   and the program's life reached the timer; otherwise it came from inside the box.
// - Without the kernel's record (an ssh engine's host, a daemon without CAP_NET_ADMIN) only the
//   engine's report is left. Its exit code 137 is both a death by SIGKILL and `sys.exit(137)`,
//   and its FinishedAt trails the kernel's exit by up to tens of milliseconds: a FinishedAt
//   certainly before the kill was sent places the end before it, but one after it places
//   nothing. So 137 after a kill is CAUSE_NOT_ESTABLISHED, any other code after a kill is the
//   program's own end (ENDED_BEFORE_KILL_ARRIVED unless FinishedAt proves ENDED_BEFORE_KILL),
//   an exit code of 129-159 is only a hint (`inferred_signal`, the doubt in unknown.signal), and
//   an OOM kill with 137 is OUT_OF_MEMORY without a claim of which process the killer chose.
//   One report settles 137 after a kill: the box's first process's own record that it received
//   PyBox's kill before the box ended (BoxState::kill_acknowledged, on Kubernetes the kill's
//   one-time nonce in the container's termination message, written by the box's feeder before it
//   killed), which the program cannot forge. 137 after an accepted kill with that record, and no
//   OOM kill seen, is DEADLINE_KILL (STOPPED_ON_DISCONNECT when the client went away), signal 9
//   from pybox_kill; without the record (erased, or an engine that cannot report it) it stays
//   CAUSE_NOT_ESTABLISHED.
#pragma once

#include "daemon/engine/box_engine.hpp"
#include "daemon/watcher/process_end_log.hpp"
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
    // What the kernel recorded of the box's first process and its interpreter; null when it was
    // not read, for `kernel_unread`.
    const watcher::FollowedEnds* kernel = nullptr;
    std::string kernel_unread;
    std::optional<KillAnswer> kill;                     // PyBox's POST /kill; nullopt = none sent
    std::optional<std::int64_t> kill_sent_unix_ns;      // daemon wall clock right before the kill was sent
    std::optional<std::int64_t> kill_sent_mono_ns;      // the same moment on the monotonic clock
    std::optional<std::int64_t> delivered_mono_ns;      // the program's delivery (the timer's start)
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
