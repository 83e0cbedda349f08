// The engine and image services as the socket API sees them, except that what would meet a
// warm box first removes the warm boxes and makes none until it is done: `pybox vm stop` (the
// engine would stop with them, and nobody would confirm their removal), and `pybox setup`,
// `image build` and `image rm` (a box keeps its image in use, so the engine could not remove an
// image it replaces or forgets). Runs meanwhile go cold. Afterwards the run services make warm
// boxes again: while the engine is down each try fails and waits (1 s doubling to 30 s), and
// `vm start` or the next run wakes them. Borrow everything; on the daemon's executor.
#pragma once

#include "daemon/run/sealed_run.hpp"
#include "daemon/server/services.hpp"

#include <string>
#include <vector>

namespace pybox::daemon {

// The run services whose warm boxes go first. pause() removes them and makes none until
// resume(); Paused does both around one operation.
class WarmBoxes {
public:
    explicit WarmBoxes(std::vector<SealedRunService*> runs) : m_runs(std::move(runs)) {}
    net::awaitable<void> pause() const
    {
        for (auto* runs : m_runs) co_await runs->pause_warm();
    }
    void resume() const
    {
        for (auto* runs : m_runs) runs->resume_warm();
    }
    void wake() const
    {
        for (auto* runs : m_runs) runs->wake_warm();
    }

    // Paused while it lives: `co_await paused.begin()` first.
    class Paused {
    public:
        explicit Paused(const WarmBoxes& warm) : m_warm(warm) {}
        ~Paused() { m_warm.resume(); }
        Paused(const Paused&) = delete;
        Paused& operator=(const Paused&) = delete;
        net::awaitable<void> begin() const { return m_warm.pause(); }

    private:
        const WarmBoxes& m_warm;
    };

private:
    std::vector<SealedRunService*> m_runs;
};

class WarmFirstEngineControl final : public EngineControl {
public:
    WarmFirstEngineControl(EngineControl& inner, const WarmBoxes& warm) : m_inner(inner), m_warm(warm) {}

    // A started engine may take warm boxes at once, not after the keepers' next retry.
    net::awaitable<Expected<proto::EngineStartAnswer>> start() override
    {
        auto started = co_await m_inner.start();
        m_warm.wake();
        co_return started;
    }
    net::awaitable<proto::EngineStatus> status() override { return m_inner.status(); }
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override
    {
        const WarmBoxes::Paused paused(m_warm);
        co_await paused.begin();
        auto stopped = co_await m_inner.stop();
        co_return stopped;
    }

private:
    EngineControl& m_inner;
    const WarmBoxes& m_warm;
};

class WarmFirstImageService final : public ImageService {
public:
    WarmFirstImageService(ImageService& inner, const WarmBoxes& warm) : m_inner(inner), m_warm(warm) {}

    net::awaitable<Expected<proto::SetupAnswer>> setup(std::vector<std::string> images, bool refresh_lock) override
    {
        const WarmBoxes::Paused paused(m_warm);
        co_await paused.begin();
        auto answer = co_await m_inner.setup(std::move(images), refresh_lock);
        co_return answer;
    }
    net::awaitable<Expected<proto::ImageList>> list() override { return m_inner.list(); }
    net::awaitable<Expected<proto::SetupAnswer>> build_own(std::string name, std::string recipe) override
    {
        const WarmBoxes::Paused paused(m_warm);
        co_await paused.begin();
        auto answer = co_await m_inner.build_own(std::move(name), std::move(recipe));
        co_return answer;
    }
    net::awaitable<Expected<proto::ImageList>> remove_own(std::string name) override
    {
        const WarmBoxes::Paused paused(m_warm);
        co_await paused.begin();
        auto answer = co_await m_inner.remove_own(std::move(name));
        co_return answer;
    }
    proto::SetupProgress progress() override { return m_inner.progress(); }

private:
    ImageService& m_inner;
    const WarmBoxes& m_warm;
};

}  // namespace pybox::daemon
