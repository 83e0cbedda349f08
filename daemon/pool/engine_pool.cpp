#include "daemon/pool/engine_pool.hpp"

#include <algorithm>

namespace pybox::daemon {

std::optional<std::size_t> choose_engine(const std::vector<EngineLoad>& engines)
{
    std::optional<std::size_t> chosen;
    for (std::size_t i = 0; i < engines.size(); ++i) {
        const auto& engine = engines[i];
        if (!engine.verified || !engine.takes_runs) continue;
        // busy / max_runs below the chosen one's, without a division.
        if (!chosen || engine.busy * engines[*chosen].max_runs < engines[*chosen].busy * engine.max_runs) chosen = i;
    }
    return chosen;
}

EnginePool::EnginePool(const std::vector<Member>& members)
{
    for (const auto& member : members) {
        proto::PoolEngine engine;
        engine.id = member.id;
        engine.address = member.address;
        engine.takes_runs = member.takes_runs;
        engine.problems.push_back({"unchecked", "Not checked yet: `pybox vm start` checks every engine."});
        m_engines.push_back(std::move(engine));
        m_max_runs.push_back(std::max<std::uint64_t>(member.max_runs, 1));
    }
}

std::optional<std::size_t> EnginePool::choose() const
{
    std::vector<EngineLoad> loads;
    for (std::size_t i = 0; i < m_engines.size(); ++i)
        loads.push_back({m_engines[i].verified, m_engines[i].takes_runs, m_engines[i].busy, m_max_runs[i]});
    return choose_engine(loads);
}

std::string EnginePool::why_none() const
{
    std::string why = "No engine of the pool is verified to take runs:";
    for (const auto& engine : m_engines) {
        if (!engine.takes_runs) continue;
        why += " " + engine.id + " (" + engine.address + "): " +
               (engine.problems.empty() ? std::string("not verified") : engine.problems.front().message);
    }
    return why + " `pybox vm status` shows every engine, and `pybox vm start` checks them again.";
}

EnginePool::Busy::Busy(EnginePool& pool, std::size_t index) : m_pool(pool), m_index(index)
{
    ++m_pool.m_engines.at(m_index).busy;
}

EnginePool::Busy::~Busy() { --m_pool.m_engines.at(m_index).busy; }

void EnginePool::record_check(std::size_t index, const proto::EngineStatus& status)
{
    auto& engine = m_engines.at(index);
    engine.running = status.running;
    engine.verified = status.verified;
    engine.problems = status.problems;
    engine.notes = status.notes;
    engine.api_version = status.api_version;
}

void EnginePool::add_notes(std::size_t index, const std::vector<std::string>& notes)
{
    auto& engine = m_engines.at(index);
    engine.notes.insert(engine.notes.end(), notes.begin(), notes.end());
}

void EnginePool::record_lost(std::size_t index, const std::string& why)
{
    auto& engine = m_engines.at(index);
    engine.running = false;
    engine.verified = false;
    engine.problems = {{"run", "A run found the engine unreachable, so later runs skip it until a check (the daemon's "
                               "own every sweep interval, `pybox vm start` or `pybox vm status`) finds it answering "
                               "again: " + why}};
}

std::vector<proto::PoolEngine> EnginePool::describe() const { return m_engines; }

}  // namespace pybox::daemon
