#include "daemon/engine/docker_box_engine.hpp"

#include "daemon/engine/docker_settings.hpp"

namespace pybox::engine {

net::awaitable<Expected<PingResult>> DockerBoxEngine::ping(Timeout timeout)
{
    co_return co_await m_client.ping(timeout);
}

net::awaitable<Expected<EngineInfo>> DockerBoxEngine::info(Timeout timeout)
{
    co_return co_await m_client.info(timeout);
}

net::awaitable<Expected<CreatedBox>> DockerBoxEngine::create_box(const BoxSpec& spec, Timeout timeout)
{
    auto created = co_await m_client.create_container(docker_create_body(spec), spec.name, timeout);
    if (!created) co_return created.error();
    co_return CreatedBox{std::move(created->id), std::move(created->warnings)};
}

net::awaitable<Expected<BoxInspection>> DockerBoxEngine::inspect_box(std::string_view id, Timeout timeout)
{
    co_return co_await m_client.inspect_container(id, timeout);
}

SettingsCheck DockerBoxEngine::check_settings(const BoxSpec& spec, const BoxInspection& inspection) const
{
    return check_docker_settings(spec, inspection.raw);
}

net::awaitable<Expected<std::unique_ptr<AttachSession>>> DockerBoxEngine::attach(std::string_view id, Timeout timeout)
{
    co_return co_await m_client.attach(id, timeout);
}

net::awaitable<Expected<std::unique_ptr<WaitHandle>>> DockerBoxEngine::begin_wait(std::string_view id, Timeout timeout)
{
    co_return co_await m_client.begin_wait(id, timeout);
}

net::awaitable<Expected<void>> DockerBoxEngine::start_box(std::string_view id, Timeout timeout)
{
    co_return co_await m_client.start_container(id, timeout);
}

net::awaitable<Expected<KillOutcome>> DockerBoxEngine::kill_box(std::string_view id, Timeout timeout)
{
    co_return co_await m_client.kill_container(id, "KILL", timeout);
}

net::awaitable<Expected<void>> DockerBoxEngine::remove_box(std::string_view id, Timeout timeout)
{
    co_return co_await m_client.remove_container(id, timeout);
}

net::awaitable<Expected<std::vector<ListedBox>>> DockerBoxEngine::list_boxes(const std::vector<std::string>& labels,
                                                                            Timeout timeout)
{
    co_return co_await m_client.list_containers(labels, timeout);
}

}  // namespace pybox::engine
