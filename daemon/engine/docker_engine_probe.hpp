// DockerEngineProbe: the EngineProbe (engine_probe.hpp) of a Docker engine, over an EngineClient
// it is given (which must outlive it). prepare() pings the engine once its API version is not
// yet negotiated (the daemon negotiates it at start and at every `vm start` and `vm status`
// check; this covers an engine that came up since); answers() pings it; clock_offset() brackets
// GET /info's SystemTime (engine_clock.hpp), on the clock of the boxes' StartedAt and
// FinishedAt (clock_names()); cgroup_facts() reads GET /info's CgroupVersion and
// CgroupDriver. Same executor and thread rules as the EngineClient.
#pragma once

#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/engine_probe.hpp"

namespace pybox::engine {

// A Docker engine's clock names: its StartedAt and FinishedAt, which the measured offset relates
// to the daemon's clock.
proto::EngineClockNames docker_clock_names();

class DockerEngineProbe final : public EngineProbe {
public:
    explicit DockerEngineProbe(EngineClient& client) : m_client(client) {}

    net::awaitable<Expected<void>> prepare(Timeout timeout) override;
    net::awaitable<Expected<void>> answers(Timeout timeout) override;
    net::awaitable<Expected<proto::ClockOffset>> clock_offset(Timeout timeout) override;
    proto::EngineClockNames clock_names() const override { return docker_clock_names(); }
    net::awaitable<Expected<CgroupFacts>> cgroup_facts(Timeout timeout) override;

private:
    EngineClient& m_client;
};

}  // namespace pybox::engine
