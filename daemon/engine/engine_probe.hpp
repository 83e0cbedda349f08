// EngineProbe: what the runs ask of an engine itself, not of its boxes: that it is ready for box
// calls, whether it still answers, how its clock stands against the daemon's and what its own
// times are read on, and, where PyBox
// watches its boxes, how its cgroup tree is laid out. Each backend answers from its own records
// (the Docker engine's /_ping and /info, docker_engine_probe.hpp; the apiserver's /version,
// daemon/kube/kube_engine_probe.hpp); nothing above daemon/engine/ knows which call that is.
//
// Implementations run their calls as coroutines on the executor of whoever built them, are not
// thread-safe, take the timeout of their whole exchange and fail with the Error codes of
// engine_call.hpp.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_call.hpp"
#include "daemon/engine/engine_facts.hpp"
#include "proto/receipt.hpp"

#include <boost/asio/awaitable.hpp>

namespace pybox::engine {

class EngineProbe {
public:
    virtual ~EngineProbe() = default;

    // Makes the engine ready for box calls where it is not yet (a Docker engine's API version is
    // negotiated once); an Error when it does not answer.
    virtual net::awaitable<Expected<void>> prepare(Timeout timeout) = 0;
    // Whether the engine answers at all: after a box call failed, tells an engine that went away
    // from one that only failed that call.
    virtual net::awaitable<Expected<void>> answers(Timeout timeout) = 0;
    // The engine's wall clock minus the daemon's, bracketed by two readings of the daemon's
    // (engine_clock.hpp); an Error whose message says why it was not measured, as the receipt's
    // unknown_reasons.absolute_clock_alignment says it.
    virtual net::awaitable<Expected<proto::ClockOffset>> clock_offset(Timeout timeout) = 0;
    // Which clock the engine's own times (a box's start and end) come from, for the receipt's
    // clock_domains.
    virtual proto::EngineClockNames clock_names() const = 0;
    // The engine's cgroup version and driver, for the watcher of its boxes. An Error
    // "cgroup_unknown" names what was missing or unknown in the engine's answer (asking again
    // does not help); any other Error is the call's.
    virtual net::awaitable<Expected<CgroupFacts>> cgroup_facts(Timeout timeout) = 0;
};

}  // namespace pybox::engine
