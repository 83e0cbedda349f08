// The repair loop (docs/repair.md): run the program sealed; while it fails, ask the model for a
// corrected program and run that, for at most request.rounds rounds.
//
// It stops at the first of: a run that succeeds (the original: original_succeeded; the model's:
// fixed), a model answer without exactly one usable program (code_block.hpp), a program the
// repair already ran (same_program), a failed model call, a run the daemon refuses, every round
// used, or `stopped()` saying the repair must end (its budget ran out, its client went away).
// Every step is in the record, in order, whatever ended it.
//
// The loop only sequences: running a program and asking the model are the caller's functions,
// so the loop is driven by fakes in tests/unit/repair_loop_test.cpp. Runs on the caller's
// coroutine; it never runs two steps at once.
#pragma once

#include "common/error.hpp"
#include "daemon/model/chat_messages.hpp"
#include "proto/repair.hpp"
#include "proto/run_answer.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <optional>
#include <vector>

namespace pybox::repair {

struct RepairActions {
    std::function<boost::asio::awaitable<Expected<proto::RunAnswer>>(proto::ValidRunRequest)> run;
    std::function<boost::asio::awaitable<Expected<model::ModelAnswer>>(std::vector<model::ModelMessage>)> ask;
    // budget_exhausted or cancelled once the repair must end; nullopt while it may go on.
    std::function<std::optional<proto::StopReason>()> stopped;
};

boost::asio::awaitable<proto::RepairRecord> run_repair(proto::RepairRequest request, RepairActions actions);

}  // namespace pybox::repair
