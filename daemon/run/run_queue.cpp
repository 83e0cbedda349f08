#include "daemon/run/run_queue.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <string>

namespace pybox::daemon {

namespace {

constexpr auto k_tuple = net::as_tuple(net::use_awaitable);

std::string retry_hint() { return " Retry in " + std::to_string(limits::k_busy_retry_after.count()) + " s."; }

}  // namespace

RunQueue::RunQueue(net::any_io_executor executor, RunQueueOptions options)
    : m_executor(std::move(executor)), m_options(options)
{
}

net::awaitable<Expected<RunQueue::Turn>> RunQueue::wait_turn(net::cancellation_slot leave)
{
    if (!m_running) {
        m_running = true;
        co_return Turn(this);
    }
    if (m_line.size() >= m_options.max_waiting)
        co_return make_error("busy", "pyboxd is busy: a run is in progress and " + std::to_string(m_line.size()) +
                                         " more are waiting, as many as it queues; nothing ran." + retry_hint());

    Waiter waiter(net::steady_timer(m_executor, m_options.max_wait));
    m_line.push_back(&waiter);
    auto [ec] = co_await waiter.wakeup.async_wait(net::bind_cancellation_slot(leave, k_tuple));
    if (leave.is_connected()) leave.clear();
    if (waiter.granted) co_return Turn(this);  // pass_turn() took it out of the line
    std::erase(m_line, &waiter);
    if (ec == net::error::operation_aborted)
        co_return make_error("client_disconnected", "The client went away while its run waited for its turn.");
    const auto waited_s = std::chrono::duration_cast<std::chrono::seconds>(m_options.max_wait).count();
    co_return make_error("busy", "pyboxd is busy: the run waited " + std::to_string(waited_s) +
                                     " s, the longest it queues, without its turn coming; nothing ran." +
                                     retry_hint());
}

void RunQueue::pass_turn()
{
    if (m_line.empty()) {
        m_running = false;
        return;
    }
    Waiter* next = m_line.front();
    m_line.pop_front();
    next->granted = true;
    next->wakeup.cancel();
}

}  // namespace pybox::daemon
