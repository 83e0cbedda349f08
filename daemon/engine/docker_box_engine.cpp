#include "daemon/engine/docker_box_engine.hpp"

#include "daemon/engine/docker_settings.hpp"
#include "daemon/engine/stream_demuxer.hpp"

#include <utility>

namespace pybox::engine {

namespace {

class DockerBoxStreams final : public BoxStreams {
public:
    explicit DockerBoxStreams(std::unique_ptr<AttachSession> session) : m_session(std::move(session)) {}

    net::awaitable<Expected<void>> write_stdin(std::string_view bytes, Timeout timeout) override
    {
        co_return co_await m_session->write_stdin(bytes, timeout);
    }
    Expected<void> close_stdin() override { return m_session->close_stdin(); }

    net::awaitable<Expected<std::vector<OutputChunk>>> read_output() override
    {
        std::vector<OutputChunk> chunks;
        while (chunks.empty()) {
            auto raw = co_await m_session->read_some();
            if (!raw || raw->empty()) {
                m_demuxer.finish();
                if (!raw) co_return raw.error();
                break;
            }
            m_demuxer.feed(*raw, chunks);
        }
        co_return chunks;
    }

    std::optional<std::string> malformed() const override { return m_demuxer.protocol_error(); }
    void cancel() override { m_session->cancel(); }

private:
    std::unique_ptr<AttachSession> m_session;
    StreamDemuxer m_demuxer;
};

}  // namespace

std::unique_ptr<BoxStreams> docker_box_streams(std::unique_ptr<AttachSession> session)
{
    return std::make_unique<DockerBoxStreams>(std::move(session));
}

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

net::awaitable<Expected<std::unique_ptr<BoxStreams>>> DockerBoxEngine::attach(std::string_view id, Timeout timeout)
{
    auto attached = co_await m_client.attach(id, timeout);
    if (!attached) co_return attached.error();
    co_return docker_box_streams(std::move(*attached));
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
