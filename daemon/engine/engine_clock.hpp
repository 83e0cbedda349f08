// The offset between the engine's wall clock (StartedAt, FinishedAt) and the daemon's, measured
// by bracketing: read the daemon's wall clock, GET /info (its SystemTime is the engine's clock,
// RFC 3339 with nanoseconds), read the daemon's wall clock again. The engine read its clock at
// some daemon instant t in [before, after], so offset = SystemTime - t lies in
// [SystemTime - after, SystemTime - before]. Pure; the caller makes the call
// (docker_engine_probe.hpp).
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_facts.hpp"
#include "proto/receipt.hpp"

#include <cstdint>

namespace pybox::engine {

// `info` is the engine's answer to GET /info; before_ns and after_ns are the daemon's wall clock (unix
// nanoseconds) right before the request and right after the answer. An Error (code
// "clock_unmeasured") says why when SystemTime is missing or unreadable or the daemon's clock
// went backwards.
Expected<proto::ClockOffset> engine_clock_offset(std::int64_t before_ns, const EngineInfo& info,
                                                 std::int64_t after_ns);

}  // namespace pybox::engine
