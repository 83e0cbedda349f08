#include "daemon/pool/pool_control.hpp"

#include "daemon/engine/engine_client.hpp"
#include "daemon/pool/image_copy.hpp"

#include <iostream>
#include <stdexcept>

namespace pybox::daemon {

EnginePoolControl::EnginePoolControl(EnginePool& pool, std::vector<PoolEngineHandles> engines,
                                     vm::RecordedImagesSource images, std::filesystem::path work_dir)
    : m_pool(pool), m_engines(std::move(engines)), m_images(std::move(images)), m_work_dir(std::move(work_dir))
{
    if (m_engines.size() != m_pool.size() || m_engines.empty())
        throw std::logic_error("EnginePoolControl: one control and client per engine, the local one first");
}

net::awaitable<Expected<proto::EngineStartAnswer>> EnginePoolControl::start()
{
    auto local = co_await m_engines[0].control->start();
    if (!local) {
        auto checked = co_await m_engines[0].control->status();
        m_pool.record_check(0, checked);
        co_return local.error();
    }
    m_pool.record_check(0, *local);
    for (std::size_t i = 1; i < m_engines.size(); ++i) co_await check_other(i, local->verified);
    local->engines = m_pool.describe();
    co_return local;
}

net::awaitable<Expected<proto::EngineStopAnswer>> EnginePoolControl::stop()
{
    auto stopped = co_await m_engines[0].control->stop();
    auto checked = co_await m_engines[0].control->status();
    m_pool.record_check(0, checked);
    co_return stopped;
}

net::awaitable<proto::EngineStatus> EnginePoolControl::status()
{
    auto local = co_await m_engines[0].control->status();
    m_pool.record_check(0, local);
    for (std::size_t i = 1; i < m_engines.size(); ++i) co_await check_other(i, false);
    local.engines = m_pool.describe();
    co_return local;
}

net::awaitable<void> EnginePoolControl::copy_images_everywhere()
{
    for (std::size_t i = 1; i < m_engines.size(); ++i) co_await check_other(i, true);
}

net::awaitable<void> EnginePoolControl::remove_image_everywhere(std::string image_id)
{
    for (std::size_t i = 1; i < m_engines.size(); ++i) {
        auto removed = co_await m_engines[i].client->remove_image(image_id, limits::k_remove_timeout);
        if (!removed)
            std::cerr << "pyboxd: could not remove image " << image_id << " from engine " << m_pool.id(i) << ": "
                      << removed.error().message << "\n";
    }
}

net::awaitable<void> EnginePoolControl::check_other(std::size_t index, bool copy)
{
    std::vector<std::string> notes;
    if (copy) {
        auto images = m_images();
        if (images && !images->empty()) {
            auto pinged = co_await m_engines[index].client->ping(limits::k_query_timeout);
            if (pinged)
                notes = co_await copy_images(*m_engines[0].client, *m_engines[index].client, std::move(*images),
                                             m_work_dir);
        }
    }
    auto checked = co_await m_engines[index].control->status();
    m_pool.record_check(index, checked);
    m_pool.add_notes(index, notes);
}

net::awaitable<Expected<proto::SetupAnswer>> PoolImageService::setup(std::vector<std::string> images, bool refresh_lock)
{
    auto answer = co_await m_local.setup(std::move(images), refresh_lock);
    if (answer) co_await follow(*answer);
    co_return answer;
}

net::awaitable<Expected<proto::SetupAnswer>> PoolImageService::build_own(std::string name, std::string recipe)
{
    auto answer = co_await m_local.build_own(std::move(name), std::move(recipe));
    if (answer) co_await follow(*answer);
    co_return answer;
}

net::awaitable<void> PoolImageService::follow(const proto::SetupAnswer& answer)
{
    for (const auto& image : answer.images)
        if (image.previous_image_id && image.previous_image_removed.value_or(false))
            co_await m_pool.remove_image_everywhere(*image.previous_image_id);
    co_await m_pool.copy_images_everywhere();
}

net::awaitable<Expected<proto::ImageList>> PoolImageService::remove_own(std::string name)
{
    auto answer = co_await m_local.remove_own(std::move(name));
    if (answer)
        for (const auto& removed : answer->images) co_await m_pool.remove_image_everywhere(removed.image_id);
    co_return answer;
}

}  // namespace pybox::daemon
