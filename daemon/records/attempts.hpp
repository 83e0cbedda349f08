// Attempt notes: <runtime>/attempts/<run>.json is written before a box is built and deleted
// once its removal is confirmed. A note left behind means a run whose end was never
// confirmed (daemon killed, engine gone); the sweep settles it later.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"

#include <cstdint>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::daemon {

struct AttemptNote {
    std::string run_id;
    std::string installation_id;
    std::string created_at;       // RFC 3339
    std::int64_t expires_at = 0;  // unix seconds
    std::string container_id;     // empty until the create call answered
    bool readable = true;         // false: a damaged note, of which only run_id (its file name) is known
    std::string engine_id = "local";  // the pool's engine the box is on (absent in older notes: local)
    std::optional<std::uint32_t> owner_uid = std::nullopt;  // the user whose run it is (absent in older notes)
};

class AttemptLog {
public:
    explicit AttemptLog(RuntimePaths paths) : m_paths(std::move(paths)) {}

    Expected<void> write(const AttemptNote& note) const;
    Expected<void> remove(const std::string& run_id) const;
    // Every readable note; damaged files are reported as notes with only run_id set.
    std::vector<AttemptNote> list() const;

private:
    RuntimePaths m_paths;
};

// The runs this daemon is executing now: their notes are written and their ends not yet
// recorded. The sweep leaves their boxes and notes alone whatever their expiry says, so a
// short box expiry (config.json) never cuts a run short. Single-threaded (the io_context).
class RunsInProgress {
public:
    // A box of this daemon's: a run's, or a warm box waiting for its program.
    enum class State { running, warm };

    // Marks a run as under way for as long as the returned object lives.
    class Mark {
    public:
        Mark(RunsInProgress* runs, std::string run_id, State state = State::running);
        ~Mark();
        Mark(const Mark&) = delete;
        Mark& operator=(const Mark&) = delete;
        // A warm box took its program: it is a run now.
        void taken();

    private:
        RunsInProgress* m_runs;
        std::string m_run_id;
    };

    bool contains(std::string_view run_id) const { return m_runs.find(run_id) != m_runs.end(); }
    // The run IDs held now (a snapshot).
    std::set<std::string, std::less<>> ids() const
    {
        std::set<std::string, std::less<>> ids;
        for (const auto& [id, state] : m_runs) ids.insert(id);
        return ids;
    }
    bool is_warm(std::string_view run_id) const
    {
        const auto found = m_runs.find(run_id);
        return found != m_runs.end() && found->second == State::warm;
    }

private:
    std::map<std::string, State, std::less<>> m_runs;
};

}  // namespace pybox::daemon
