#include "daemon/run/run_queue.hpp"

#include "common/api_error_codes.hpp"

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
    m_options.max_running = std::max<std::size_t>(m_options.max_running, 1);
}

net::awaitable<Expected<RunQueue::Turn>> RunQueue::wait_turn(std::uint32_t owner, net::cancellation_slot leave)
{
    if (m_running < m_options.max_running) {
        ++m_running;
        record_turn(owner);
        co_return Turn(this);
    }
    if (m_line.size() >= m_options.max_waiting)
        co_return make_error(api_error::k_busy, "pyboxd is busy: " + std::to_string(m_running) + " run(s) in progress and " + std::to_string(m_line.size()) +
                                         " more are waiting, as many as it queues; nothing ran." + retry_hint());
    const auto owners_waiting =
        static_cast<std::size_t>(std::ranges::count_if(m_line, [owner](const Waiter* w) { return w->owner == owner; }));
    if (owners_waiting >= m_options.max_waiting_per_owner)
        co_return make_error(api_error::k_busy, "pyboxd is busy: " + std::to_string(owners_waiting) +
                                         " runs of this user are waiting, as many as it queues for one user; "
                                         "nothing ran." + retry_hint());

    Waiter waiter(owner, net::steady_timer(m_executor, m_options.max_wait));
    m_line.push_back(&waiter);
    auto [ec] = co_await waiter.wakeup.async_wait(net::bind_cancellation_slot(leave, k_tuple));
    if (leave.is_connected()) leave.clear();
    if (waiter.granted) co_return Turn(this);  // pass_turn() took it out of the line
    std::erase(m_line, &waiter);
    if (ec == net::error::operation_aborted)
        co_return make_error(api_error::k_client_disconnected, "The client went away while its run waited for its turn.");
    const auto waited_s = std::chrono::duration_cast<std::chrono::seconds>(m_options.max_wait).count();
    co_return make_error(api_error::k_busy, "pyboxd is busy: the run waited " + std::to_string(waited_s) +
                                     " s, the longest it queues, without its turn coming; nothing ran." +
                                     retry_hint());
}

void RunQueue::pass_turn()
{
    if (m_line.empty()) {
        --m_running;
        return;
    }
    // The first in line of the user whose latest turn is the oldest (0: never had one).
    auto next = m_line.begin();
    auto last_turn_of = [this](std::uint32_t owner) {
        const auto found = m_last_turn.find(owner);
        return found == m_last_turn.end() ? std::uint64_t{0} : found->second;
    };
    for (auto candidate = m_line.begin(); candidate != m_line.end(); ++candidate)
        if (last_turn_of((*candidate)->owner) < last_turn_of((*next)->owner)) next = candidate;
    Waiter* chosen = *next;
    m_line.erase(next);
    record_turn(chosen->owner);
    chosen->granted = true;
    chosen->wakeup.cancel();
}

void RunQueue::record_turn(std::uint32_t owner)
{
    m_last_turn[owner] = ++m_turns;
    // Bounded: the user whose latest turn is the oldest is forgotten (as if it never had one).
    if (m_last_turn.size() > k_max_remembered_owners)
        m_last_turn.erase(std::ranges::min_element(m_last_turn, {}, [](const auto& entry) { return entry.second; }));
}

}  // namespace pybox::daemon
