// The engine and image services as the socket API sees them, except that what would meet a
// warm box removes the warm boxes first: `pybox vm stop` (the engine would stop with them, and
// nobody would confirm their removal), and `pybox setup`, `image build` and `image rm` (a box
// keeps its image in use, so the engine could not remove an image it replaces or forgets). The
// run services keep making warm boxes afterwards: while the engine is down or the image is not
// there each try fails and waits (1 s doubling to 30 s), and the next run wakes them. A box made
// during a long build from the image it replaces is retired by the next run (its image ID no
// longer matches). Borrow everything; on the daemon's executor.
#pragma once

#include "daemon/run/sealed_run.hpp"
#include "daemon/server/services.hpp"

#include <string>
#include <vector>

namespace pybox::daemon {

// The run services whose warm boxes go first.
class WarmBoxes {
public:
    explicit WarmBoxes(std::vector<SealedRunService*> runs) : m_runs(std::move(runs)) {}
    net::awaitable<void> drop() const
    {
        for (auto* runs : m_runs) co_await runs->drop_warm();
    }

private:
    std::vector<SealedRunService*> m_runs;
};

class WarmFirstEngineControl final : public EngineControl {
public:
    WarmFirstEngineControl(EngineControl& inner, const WarmBoxes& warm) : m_inner(inner), m_warm(warm) {}

    net::awaitable<Expected<proto::EngineStartAnswer>> start() override { return m_inner.start(); }
    net::awaitable<proto::EngineStatus> status() override { return m_inner.status(); }
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override
    {
        co_await m_warm.drop();
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
        co_await m_warm.drop();
        auto answer = co_await m_inner.setup(std::move(images), refresh_lock);
        co_return answer;
    }
    net::awaitable<Expected<proto::ImageList>> list() override { return m_inner.list(); }
    net::awaitable<Expected<proto::SetupAnswer>> build_own(std::string name, std::string recipe) override
    {
        co_await m_warm.drop();
        auto answer = co_await m_inner.build_own(std::move(name), std::move(recipe));
        co_return answer;
    }
    net::awaitable<Expected<proto::ImageList>> remove_own(std::string name) override
    {
        co_await m_warm.drop();
        auto answer = co_await m_inner.remove_own(std::move(name));
        co_return answer;
    }
    proto::SetupProgress progress() override { return m_inner.progress(); }

private:
    ImageService& m_inner;
    const WarmBoxes& m_warm;
};

}  // namespace pybox::daemon
