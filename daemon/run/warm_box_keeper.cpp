#include "daemon/run/warm_box_keeper.hpp"

#include "common/clock.hpp"
#include "common/limits.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>

namespace pybox::daemon {

namespace {

constexpr auto k_use = net::as_tuple(net::use_awaitable);

}  // namespace

WarmBoxKeeper::WarmBoxKeeper(net::any_io_executor executor, WarmSetup setup, std::int64_t box_expiry_s,
                             const RunQueue& queue, MakeBox make)
    : m_executor(executor), m_setup(setup), m_queue(queue), m_make(std::move(make)),
      m_image(proto::RunRequest{}.image), m_wakeup(executor), m_changed(executor)
{
    if (box_expiry_s < limits::k_warm_box_renewed_before_expiry_s + limits::k_min_warm_box_wait_s)
        m_setup.count = 0;
}

net::awaitable<std::unique_ptr<BoxRun>> WarmBoxKeeper::take(const proto::RunRequest& request,
                                                            std::uint32_t owner_uid, const VerifiedImage& image)
{
    m_series = false;
    // A warm box is labelled with its user when it is made: only that user's runs take it.
    if (m_setup.count == 0 || request.files || m_paused > 0 || owner_uid != m_setup.owner_uid) co_return nullptr;
    const auto give_up = MonoClock::now() + limits::k_warm_box_longest_wait;
    // Unless a box waited at least k_warm_series_gap for this run, runs come one after another.
    m_series = true;
    for (;;) {
        if (request.image != m_image) co_return nullptr;
        while (!m_ready.empty()) {
            std::unique_ptr<BoxRun> box = std::move(m_ready.front());
            m_ready.pop_front();
            const auto& made = box->description();
            // An image rebuilt since the box was made (another ID or recipe) retires it.
            if (made.request.image == request.image && made.image.image_id == image.image_id &&
                made.image.recipe_sha256 == image.recipe_sha256) {
                const bool usable = co_await box->still_usable(request.timeout_s);
                if (usable) {
                    m_series = box->waiting_for() < limits::k_warm_series_gap;
                    co_return box;
                }
            }
            discard_later(std::move(box));
        }
        if (!m_preparing || MonoClock::now() >= give_up) co_return nullptr;
        m_changed.expires_at(give_up);
        (void)co_await m_changed.async_wait(k_use);
    }
}

void WarmBoxKeeper::discard_later(std::unique_ptr<BoxRun> box)
{
    auto discard = [](std::unique_ptr<BoxRun> doomed) -> net::awaitable<void> { co_await doomed->discard(); };
    net::co_spawn(m_executor, discard(std::move(box)), net::detached);
}

net::awaitable<void> WarmBoxKeeper::keep()
{
    auto retry_after = limits::k_warm_retry_first;
    std::string last_failure;
    while (m_setup.count > 0 && !m_stopping) {
        // Boxes due for renewal go; so do boxes of an image no longer wanted.
        const auto now = unix_seconds(WallClock::now());
        std::erase_if(m_ready, [&](std::unique_ptr<BoxRun>& box) {
            const bool due = now >= box->expires_at() - limits::k_warm_box_renewed_before_expiry_s ||
                             box->description().request.image != m_image;
            if (due) discard_later(std::move(box));
            return due;
        });
        auto next_wake = std::chrono::steady_clock::now() + std::chrono::hours(1);
        const bool may_make = m_series || !m_queue.running();
        if (std::ssize(m_ready) < m_setup.count && may_make && m_paused == 0 && m_queue.waiting() == 0) {
            m_preparing = true;
            auto prepared = co_await m_make(m_image, m_setup.owner_uid);
            // Stopped or paused meanwhile: the box goes before anyone waiting learns it is done.
            const bool unwanted = prepared && (m_stopping || m_paused > 0);
            if (unwanted) co_await (*prepared)->discard();
            m_preparing = false;
            m_changed.cancel();
            if (m_stopping) break;
            if (unwanted) continue;
            if (prepared) {
                m_ready.push_back(std::move(*prepared));
                retry_after = limits::k_warm_retry_first;
                last_failure.clear();
                continue;
            }
            if (prepared.error().message != last_failure) {
                last_failure = prepared.error().message;
                std::cerr << "pyboxd: no warm box for now (runs go cold): " << last_failure << "\n";
            }
            next_wake = std::chrono::steady_clock::now() + retry_after;
            retry_after = std::min(retry_after * 2, limits::k_warm_retry_longest);
        } else if (!m_ready.empty()) {
            const auto renew_in = m_ready.front()->expires_at() - limits::k_warm_box_renewed_before_expiry_s - now;
            next_wake = std::chrono::steady_clock::now() + std::chrono::seconds(std::max<std::int64_t>(renew_in, 0));
        }
        if (m_stopping) break;
        m_wakeup.expires_at(next_wake);
        (void)co_await m_wakeup.async_wait(k_use);
    }
    co_await remove_all();
}

net::awaitable<void> WarmBoxKeeper::stop()
{
    m_stopping = true;
    m_wakeup.cancel();
    co_await remove_all();
}

net::awaitable<void> WarmBoxKeeper::pause()
{
    ++m_paused;
    // A box being made is kept by keep() only while nothing pauses it.
    net::steady_timer poll(m_executor);
    while (m_preparing) {
        poll.expires_after(std::chrono::milliseconds(20));
        (void)co_await poll.async_wait(k_use);
    }
    co_await remove_all();
}

void WarmBoxKeeper::resume()
{
    if (m_paused > 0) --m_paused;
    wake();
}

net::awaitable<void> WarmBoxKeeper::remove_all()
{
    while (!m_ready.empty()) {
        std::unique_ptr<BoxRun> box = std::move(m_ready.front());
        m_ready.pop_front();
        co_await box->discard();
    }
}

}  // namespace pybox::daemon
