#include "daemon/pool/pool_control.hpp"


#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <iostream>
#include <stdexcept>

namespace pybox::daemon {

EnginePoolControl::EnginePoolControl(EnginePool& pool, std::vector<PoolEngineHandles> engines,
                                     engine::EngineClient* image_builder, vm::RecordedImagesSource images,
                                     std::filesystem::path work_dir)
    : m_pool(pool),
      m_engines(std::move(engines)),
      m_image_builder(image_builder),
      m_images(std::move(images)),
      m_work_dir(std::move(work_dir)),
      m_check_events(m_engines.size(), 0)
{
    if (m_engines.size() != m_pool.size() || m_engines.empty())
        throw std::logic_error("EnginePoolControl: one control and backend per engine, the local one first");
}

void EnginePoolControl::record(std::size_t index, const proto::EngineStatus& status)
{
    m_pool.record_check(index, status);
    ++m_check_events.at(index);
}

net::awaitable<Expected<proto::EngineStartAnswer>> EnginePoolControl::start()
{
    begin_check(0);
    auto local = co_await m_engines[0].control->start();
    if (!local) {
        auto checked = co_await m_engines[0].control->status();
        record(0, checked);
        co_return local.error();
    }
    record(0, *local);
    for (std::size_t i = 1; i < m_engines.size(); ++i) co_await check_other(i, local->verified);
    local->engines = m_pool.describe();
    co_return local;
}

net::awaitable<Expected<proto::EngineStopAnswer>> EnginePoolControl::stop()
{
    begin_check(0);
    auto stopped = co_await m_engines[0].control->stop();
    auto checked = co_await m_engines[0].control->status();
    record(0, checked);
    co_return stopped;
}

net::awaitable<proto::EngineStatus> EnginePoolControl::status()
{
    begin_check(0);
    auto local = co_await m_engines[0].control->status();
    record(0, local);
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
        auto removed = co_await m_engines[i].backend->remove_image(image_id);
        if (!removed)
            std::cerr << "pyboxd: could not remove image " << image_id << " from engine " << m_pool.id(i) << ": "
                      << removed.error().message << "\n";
    }
}

net::awaitable<void> EnginePoolControl::check_other(std::size_t index, bool copy)
{
    begin_check(index);
    std::vector<std::string> notes;
    if (copy) {
        auto images = m_images();
        if (images && m_image_builder != nullptr)
            notes = co_await m_engines[index].backend->receive_images(*m_image_builder, std::move(*images), m_work_dir);
    }
    auto checked = co_await m_engines[index].control->status();
    record(index, checked);
    m_pool.add_notes(index, notes);
}

net::awaitable<void> EnginePoolControl::recheck_unverified()
{
    const auto engines = m_pool.describe();
    for (std::size_t i = 0; i < engines.size(); ++i) {
        if (engines[i].verified) continue;
        const auto ticket = begin_check(i);
        auto checked = co_await m_engines[i].control->status();
        if (ticket != m_check_events[i]) continue;  // a later check knows better
        record(i, checked);
        if (checked.verified)
            std::cerr << "pyboxd: engine " << m_pool.id(i) << " (" << engines[i].address
                      << ") answers and passes its checks again: runs may use it\n";
    }
}

net::awaitable<void> EnginePoolControl::recheck_forever(std::chrono::seconds interval)
{
    net::steady_timer timer(co_await net::this_coro::executor);
    for (;;) {
        timer.expires_after(interval);
        auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
        if (ec) co_return;
        co_await recheck_unverified();
    }
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
