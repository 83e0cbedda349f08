// A DockerBackend (daemon/engine/docker_backend.hpp) over the scripted fake engine
// (fake_engine.hpp), with checks that only count how often they are asked: for the tests of
// what the pool and the checks ask of an engine's backend.
#pragma once

#include "daemon/engine/docker_backend.hpp"
#include "tests/support/fake_engine.hpp"

#include <boost/asio/io_context.hpp>

#include <memory>

namespace pybox::test {

// An engine's checks that answer "not verified" and count the calls.
class CountedControl final : public daemon::EngineControl {
public:
    int asked = 0;
    net::awaitable<Expected<proto::EngineStartAnswer>> start() override
    {
        ++asked;
        co_return make_error("engine_not_managed", "not in this test");
    }
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override
    {
        ++asked;
        co_return make_error("engine_not_managed", "not in this test");
    }
    net::awaitable<proto::EngineStatus> status() override
    {
        ++asked;
        co_return proto::EngineStatus{};
    }
};

struct DockerBackendFixture {
    net::io_context io;
    FakeEngine* engine = nullptr;
    CountedControl* control = nullptr;
    engine::DockerBackend backend{io.get_executor(), fake_engine(), [this](engine::EngineClient&) {
                                      auto made = std::make_unique<CountedControl>();
                                      control = made.get();
                                      return made;
                                  },
                                  "runc"};

    template <class T>
    T run(net::awaitable<T> call)
    {
        return run_to_result(io, std::move(call));
    }

private:
    std::unique_ptr<FakeEngine> fake_engine()
    {
        auto fake = std::make_unique<FakeEngine>(io);
        engine = fake.get();
        return fake;
    }
};

}  // namespace pybox::test
