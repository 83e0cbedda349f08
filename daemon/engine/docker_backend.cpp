#include "daemon/engine/docker_backend.hpp"

#include "common/limits.hpp"
#include "daemon/engine/docker_image_copy.hpp"

#include <stdexcept>
#include <utility>

namespace pybox::engine {

DockerBackend::DockerBackend(net::any_io_executor executor, std::unique_ptr<EngineDialer> dialer,
                             const ControlMaker& make_control, std::string runtime)
    : m_client(std::move(executor), std::move(dialer)),
      m_boxes(m_client, std::move(runtime)),
      m_probe(m_client),
      m_control(make_control(m_client))
{
    if (!m_control) throw std::logic_error("DockerBackend: the engine's checks were not made");
}

net::awaitable<Expected<images::EngineImageState>> DockerBackend::image_state(const images::ImageRecord& record)
{
    co_return co_await images::engine_image_state(m_client, record);
}

net::awaitable<std::vector<std::string>> DockerBackend::receive_images(EngineClient& builder,
                                                                       std::vector<vm::RecordedImage> images,
                                                                       std::filesystem::path work_dir)
{
    if (images.empty()) co_return std::vector<std::string>{};
    // An engine that does not answer is told nothing: its checks, which follow, say so.
    auto pinged = co_await m_client.ping(limits::k_query_timeout);
    if (!pinged) co_return std::vector<std::string>{};
    co_return co_await copy_images(builder, m_client, std::move(images), std::move(work_dir));
}

net::awaitable<Expected<void>> DockerBackend::remove_image(const std::string& image_id)
{
    co_return co_await m_client.remove_image(image_id, limits::k_remove_timeout);
}

}  // namespace pybox::engine
