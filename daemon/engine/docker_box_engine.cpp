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
    EnvironmentReport environment() const override
    {
        return {std::nullopt, "a Docker box does not report its program's environment: the engine gives the program "
                              "the variables PyBox set, the image's own (its ENV) and HOSTNAME, which PyBox does not "
                              "read from inside the box"};
    }

private:
    std::unique_ptr<AttachSession> m_session;
    StreamDemuxer m_demuxer;
};

class DockerBoxEnd final : public BoxEnd {
public:
    explicit DockerBoxEnd(std::unique_ptr<WaitHandle> wait) : m_wait(std::move(wait)) {}

    net::awaitable<Expected<void>> ended(Timeout timeout) override
    {
        auto result = co_await m_wait->result(timeout);
        if (!result) co_return result.error();
        co_return Expected<void>{};
    }
    void cancel() override { m_wait->cancel(); }

private:
    std::unique_ptr<WaitHandle> m_wait;
};

}  // namespace

std::unique_ptr<BoxStreams> docker_box_streams(std::unique_ptr<AttachSession> session)
{
    return std::make_unique<DockerBoxStreams>(std::move(session));
}

std::string DockerBoxEngine::output_provenance() const
{
    return "target byte streams via bounded Docker attach; untrusted content";
}

std::optional<std::string> DockerBoxEngine::box_cgroup(std::string_view run_parent, std::string_view box_id) const
{
    return std::string(run_parent) + "/" + std::string(box_id);
}

net::awaitable<Expected<CreatedBox>> DockerBoxEngine::create_box(const BoxSpec& spec, Timeout timeout)
{
    auto created = co_await m_client.create_container(docker_create_body(spec, m_runtime), spec.name, timeout);
    if (!created) co_return created.error();
    co_return CreatedBox{std::move(created->id), std::move(created->warnings)};
}

net::awaitable<Expected<BoxInspection>> DockerBoxEngine::inspect_box(std::string_view id, Timeout timeout)
{
    co_return co_await m_client.inspect_container(id, timeout);
}

SettingsCheck DockerBoxEngine::check_settings(const BoxSpec& spec, const BoxInspection& inspection) const
{
    return check_docker_settings(spec, m_runtime, inspection.raw);
}

net::awaitable<boost::system::result<LaunchedBox, LaunchFailure>> DockerBoxEngine::launch_box(std::string_view id,
                                                                                             LaunchTimeouts timeouts)
{
    using Step = LaunchFailure::Step;
    auto attached = co_await m_client.attach(id, timeouts.connect);
    if (!attached) co_return LaunchFailure{Step::streams, attached.error()};
    auto waiting = co_await m_client.begin_wait(id, timeouts.connect);
    if (!waiting) co_return LaunchFailure{Step::end, waiting.error()};
    LaunchedBox launched{docker_box_streams(std::move(*attached)), std::make_unique<DockerBoxEnd>(std::move(*waiting)),
                         MonoClock::now()};
    auto started = co_await m_client.start_container(id, timeouts.start);
    if (!started) co_return LaunchFailure{Step::start, started.error()};
    co_return std::move(launched);
}

net::awaitable<Expected<BoxKillOutcome>> DockerBoxEngine::kill_box(std::string_view id, Timeout timeout)
{
    auto killed = co_await m_client.kill_container(id, "KILL", timeout);
    if (!killed) co_return killed.error();
    co_return *killed == KillOutcome::killed ? BoxKillOutcome::killed : BoxKillOutcome::already_ended;
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
