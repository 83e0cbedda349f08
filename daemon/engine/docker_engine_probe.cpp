#include "daemon/engine/docker_engine_probe.hpp"

#include "common/clock.hpp"
#include "daemon/engine/docker_facts.hpp"
#include "daemon/engine/engine_clock.hpp"

namespace pybox::engine {

net::awaitable<Expected<void>> DockerEngineProbe::prepare(Timeout timeout)
{
    if (!m_client.api_version().empty()) co_return Expected<void>{};
    co_return co_await answers(timeout);
}

net::awaitable<Expected<void>> DockerEngineProbe::answers(Timeout timeout)
{
    auto pinged = co_await m_client.ping(timeout);
    if (!pinged) co_return pinged.error();
    co_return Expected<void>{};
}

net::awaitable<Expected<proto::ClockOffset>> DockerEngineProbe::clock_offset(Timeout timeout)
{
    const std::int64_t before_ns = unix_nanoseconds(WallClock::now());
    auto info = co_await m_client.info(timeout);
    const std::int64_t after_ns = unix_nanoseconds(WallClock::now());
    if (!info) co_return make_error(info.error().code, "GET /info failed: " + info.error().message);
    co_return engine_clock_offset(before_ns, *info, after_ns);
}

proto::EngineClockNames docker_clock_names()
{
    return {"engine wall clock (StartedAt, FinishedAt): daemon wall clock + engine_offset_ns",
            "engine wall clock (FinishedAt - StartedAt, nanoseconds)"};
}

net::awaitable<Expected<CgroupFacts>> DockerEngineProbe::cgroup_facts(Timeout timeout)
{
    auto info = co_await m_client.info(timeout);
    if (!info) co_return info.error();
    co_return cgroup_facts_from_info(*info);
}

}  // namespace pybox::engine
