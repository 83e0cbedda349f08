// Sweeper: finds what earlier runs left behind and cleans it up, touching only boxes that
// carry this installation's pybox.owner label.
//
// - A box whose pybox.expires time has passed is removed (force) and confirmed gone.
// - An attempt note whose run was never confirmed is settled (deleted) once its box is gone
//   and expiry + 60 s has passed; what else the run left on the host (its run parent cgroup)
//   is released first, and the note stays until that succeeds.
// Runs on the daemon's io_context: at start, then every `interval`. Boxes of runs in progress
// are never expired (their expiry is 120 s after creation, past any run's end). The
// EngineClient must outlive the sweeper.
#pragma once

#include "daemon/engine/engine_client.hpp"
#include "daemon/run/attempts.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace pybox::daemon {

// Releases what a finished run left on the engine's host besides its box (its run parent cgroup).
using RunReleaser = std::function<Expected<void>(const std::string& run_id)>;

class Sweeper {
public:
    Sweeper(engine::EngineClient& engine, AttemptLog attempts, std::string installation_id,
            RunReleaser release_run = {});

    // One sweep; returns (and keeps) its summary:
    // {"swept_at", "engine_reachable", "boxes_found", "boxes_removed", "boxes_not_yet_expired",
    //  "attempts_unconfirmed", "attempts_settled", "errors": [...]}.
    boost::asio::awaitable<boost::json::value> sweep_once();
    // Sweeps now and then every interval, until the io_context stops.
    boost::asio::awaitable<void> sweep_forever(std::chrono::seconds interval);

    const boost::json::value& last_summary() const { return m_last_summary; }

private:
    engine::EngineClient& m_engine;
    AttemptLog m_attempts;
    std::string m_installation_id;
    RunReleaser m_release_run;
    boost::json::value m_last_summary;
};

}  // namespace pybox::daemon
