// WarmFirstEngineControl: `pybox vm start|stop|status` as the engine control it wraps does them,
// except that stop() first removes the warm boxes of the given run services, so that stopping
// the engine leaves no box behind whose removal nobody confirmed. The run services keep making
// warm boxes afterwards: while the engine is down each try fails and waits (1 s doubling to 30
// s), and the first run after `vm start` wakes them. Borrows everything; on the daemon's executor.
#pragma once

#include "daemon/run/sealed_run.hpp"
#include "daemon/server/services.hpp"

#include <vector>

namespace pybox::daemon {

class WarmFirstEngineControl final : public EngineControl {
public:
    WarmFirstEngineControl(EngineControl& inner, std::vector<SealedRunService*> runs)
        : m_inner(inner), m_runs(std::move(runs))
    {
    }

    net::awaitable<Expected<proto::EngineStartAnswer>> start() override { return m_inner.start(); }
    net::awaitable<proto::EngineStatus> status() override { return m_inner.status(); }
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override
    {
        for (auto* runs : m_runs) co_await runs->drop_warm();
        auto stopped = co_await m_inner.stop();
        co_return stopped;
    }

private:
    EngineControl& m_inner;
    std::vector<SealedRunService*> m_runs;
};

}  // namespace pybox::daemon
