// EnginePool: what the daemon knows of each engine of its pool (config.json's local engine and
// "engines", docs/api.md "The pool of engines"), and the choice of the engine a run goes to.
//
// A run goes to the least busy verified engine that takes runs: fewest runs of this daemon on
// it now (running plus waiting in its line) for each run it may run at once (one on a Docker
// engine, a cluster's "max_runs"), so a cluster with room is chosen before an engine that would
// queue the run; ties to the first in config order, the local engine first. An engine is verified by a check (`pybox vm start`, `pybox vm status`, the
// daemon's own check at start and its re-check of unverified engines every sweep interval) that
// it answered and passed every check; it is skipped, with the reason in its problems, from the
// moment a run finds it unreachable until a later check passes again.
//
// Pure state, no I/O: not thread-safe, used from the daemon's one io_context.
#pragma once

#include "common/error.hpp"
#include "proto/answers.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

// What the choice looks at, one per engine, in config order.
struct EngineLoad {
    bool verified = false;
    bool takes_runs = true;
    std::uint64_t busy = 0;
    std::uint64_t max_runs = 1;  // runs it may run at once (at least 1)
};

// The index of the engine a new run goes to, or nullopt when no verified engine takes runs.
std::optional<std::size_t> choose_engine(const std::vector<EngineLoad>& engines);

class EnginePool {
public:
    struct Member {
        std::string id;
        std::string address;
        bool takes_runs = true;
        std::uint64_t max_runs = 1;
    };
    explicit EnginePool(const std::vector<Member>& members);

    std::size_t size() const { return m_engines.size(); }
    const std::string& id(std::size_t index) const { return m_engines.at(index).id; }

    // The engine for a new run (see above); nullopt when none is verified.
    std::optional<std::size_t> choose() const;
    // Why no engine can take a run, for the error answer.
    std::string why_none() const;

    // A run holds its engine busy for as long as the returned object lives.
    class Busy {
    public:
        Busy(EnginePool& pool, std::size_t index);
        ~Busy();
        Busy(const Busy&) = delete;
        Busy& operator=(const Busy&) = delete;

    private:
        EnginePool& m_pool;
        std::size_t m_index;
    };

    // The outcome of a check of one engine (its EngineControl's status or start answer).
    void record_check(std::size_t index, const proto::EngineStatus& status);
    // Extra notes of the last check (e.g. the images copied to it).
    void add_notes(std::size_t index, const std::vector<std::string>& notes);
    // A run found the engine unreachable: later runs skip it until a check passes again.
    void record_lost(std::size_t index, const std::string& why);

    // Every engine, for the status answer.
    std::vector<proto::PoolEngine> describe() const;

private:
    std::vector<proto::PoolEngine> m_engines;
    std::vector<std::uint64_t> m_max_runs;  // per engine, as m_engines
};

}  // namespace pybox::daemon
