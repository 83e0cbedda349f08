// A box's final state as the engine reports it (Docker 20.10's State object, read by
// daemon/engine's docker_box_state), for the tests of how a run ended and of its receipt.
#pragma once

#include "common/clock.hpp"
#include "daemon/engine/docker_facts.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <utility>

namespace pybox::test {

inline constexpr const char* k_started_at = "2026-11-29T20:00:05.000000000Z";
inline constexpr const char* k_finished_at = "2026-11-29T20:00:05.250000001Z";
// FinishedAt above, on the engine's clock, in unix nanoseconds.
inline const std::int64_t k_finished_ns = *parse_rfc3339_ns(k_finished_at);

// The state the engine reports in the final inspect.
inline engine::BoxState engine_state_of(boost::json::object state)
{
    return engine::docker_box_state(boost::json::object{{"State", std::move(state)}});
}

// A box that exited with `exit_code` between k_started_at and k_finished_at.
inline engine::BoxState exited_state(int exit_code, bool oom = false)
{
    return engine_state_of({{"Status", "exited"},
                            {"Running", false},
                            {"ExitCode", exit_code},
                            {"OOMKilled", oom},
                            {"StartedAt", k_started_at},
                            {"FinishedAt", k_finished_at}});
}

}  // namespace pybox::test
