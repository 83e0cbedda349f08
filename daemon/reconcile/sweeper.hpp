// Sweeper: finds what earlier runs left behind and cleans it up, touching only boxes that
// carry this installation's pybox.owner label.
//
// - A box whose pybox.expires time has passed is removed (force) and confirmed gone.
// - An attempt note whose run was never confirmed is settled once its box is gone and its
//   expiry + `settle_after_expiry_s` has passed: what else the run left on the host (its run
//   parent cgroup) is released, an entry saying what the sweep found and did is appended to
//   the attempt journal (attempt_journal.hpp), and only then is the note deleted. The note
//   stays, and the error is in the summary, while any step fails.
// - Runs in progress in this daemon (`in_progress`) are never touched, whatever their expiry.
// Runs on the daemon's io_context: at start, then every `interval`. The engine and the
// RunsInProgress must outlive the sweeper.
#pragma once

#include "common/limits.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/records/attempt_journal.hpp"
#include "daemon/records/attempts.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <string>

namespace pybox::daemon {

// Releases what a finished run left on the engine's host besides its box (its run parent cgroup).
// Awaited on the daemon's io_context, which it must not block.
using RunReleaser = std::function<boost::asio::awaitable<Expected<void>>(const std::string& run_id)>;

struct SweepSettings {
    std::int64_t settle_after_expiry_s = limits::k_settle_after_expiry_s;
    const RunsInProgress* in_progress = nullptr;
    RunReleaser release_run;
    // The engine this sweeper sweeps: it settles only the notes of runs on that engine (each
    // engine of a pool has its own sweeper; AttemptNote::engine_id).
    std::string engine_id{engine::k_local_engine_id};
};

class Sweeper {
public:
    Sweeper(engine::BoxEngine& engine, AttemptLog attempts, AttemptJournal journal, std::string installation_id,
            SweepSettings settings = {});

    // One sweep; returns (and keeps) its summary:
    // {"swept_at", "engine_reachable", "boxes_found", "boxes_removed", "boxes_not_yet_expired",
    //  "attempts_unconfirmed", "attempts_settled", "errors": [...]}.
    boost::asio::awaitable<boost::json::value> sweep_once();
    // Sweeps now and then every interval, until the io_context stops.
    boost::asio::awaitable<void> sweep_forever(std::chrono::seconds interval);

    const boost::json::value& last_summary() const { return m_last_summary; }

private:
    // What this sweeper saw of an unsettled run, for its journal entry (kept in memory; bounded).
    struct RunTrace {
        std::optional<std::string> box_removed_at;
        std::vector<std::string> errors;
    };
    RunTrace& trace(const std::string& run_id);
    void note_error(const std::string& run_id, const std::string& error);
    // Settles one note whose box is gone; the error says which step failed.
    boost::asio::awaitable<Expected<void>> settle(const AttemptNote& note);

    engine::BoxEngine& m_engine;
    AttemptLog m_attempts;
    AttemptJournal m_journal;
    std::string m_installation_id;
    SweepSettings m_settings;
    std::map<std::string, RunTrace> m_traces;
    boost::json::value m_last_summary;
};

}  // namespace pybox::daemon
