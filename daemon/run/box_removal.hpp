// Removing boxes and confirming they are gone: a forced removal, then an inspect that must
// find no such box. The first round tries each box once within `budget` (limits::k_cleanup_budget,
// the seed's 15 s for the whole cleanup); the boxes it did not confirm gone (an interruption: an
// error, an engine that did not answer, or the budget spent before their turn) get one retry,
// with a `budget` of its own (the seed's "one retry after an interruption gets another 15 s").
// Each call is also bounded by its own timeout (remove 3 s, inspect 2 s). Used by the run's
// cleanup and the sweep; the engine must outlive the call.
#pragma once

#include "daemon/engine/box_engine.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

struct RemovalOutcome {
    bool all_gone = false;   // every box was confirmed gone (false for an empty list)
    int attempts = 0;        // delete requests sent
    std::optional<std::string> error;  // the last failure, when not all are gone
    bool timed_out = false;  // that failure was the engine not answering in time
};

engine::net::awaitable<RemovalOutcome> remove_boxes(engine::BoxEngine& engine, const std::vector<std::string>& ids,
                                            std::chrono::milliseconds budget);

}  // namespace pybox::daemon
