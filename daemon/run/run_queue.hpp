// RunQueue: runs take turns, one at a time, in arrival order, with a bounded line behind the
// running one (by default common/limits.hpp's k_max_waiting_runs places and k_max_queue_wait).
//
// Not thread-safe: use it from the daemon's one executor. The queue must outlive every Turn and
// every wait_turn() in progress.
//
// wait_turn() answers at once with a Turn when nobody runs; at once with "busy" when every
// place in line is taken; otherwise it waits in line and answers with the Turn when the one
// before it drops its Turn, with "busy" when the turn has not come within the longest wait, or
// with "client_disconnected" when `leave` fires first (its place is freed at once). Holding the
// Turn is running; dropping it passes the turn to the first in line. "busy" means nothing ran.
#pragma once

#include "common/error.hpp"
#include "common/limits.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <utility>

namespace pybox::daemon {

namespace net = boost::asio;

struct RunQueueOptions {
    std::size_t max_waiting = limits::k_max_waiting_runs;
    std::chrono::milliseconds max_wait = limits::k_max_queue_wait;
};

class RunQueue {
public:
    explicit RunQueue(net::any_io_executor executor, RunQueueOptions options = {});
    RunQueue(const RunQueue&) = delete;
    RunQueue& operator=(const RunQueue&) = delete;

    class Turn {
    public:
        Turn(Turn&& other) noexcept : m_queue(std::exchange(other.m_queue, nullptr)) {}
        Turn& operator=(Turn&&) = delete;
        ~Turn()
        {
            if (m_queue) m_queue->pass_turn();
        }

    private:
        friend class RunQueue;
        explicit Turn(RunQueue* queue) : m_queue(queue) {}
        RunQueue* m_queue;
    };

    net::awaitable<Expected<Turn>> wait_turn(net::cancellation_slot leave);

    // Runs waiting in line (not counting the running one).
    std::size_t waiting() const { return m_line.size(); }
    // Whether a run holds its turn now.
    bool running() const { return m_running; }

private:
    struct Waiter {
        explicit Waiter(net::steady_timer timer) : wakeup(std::move(timer)) {}
        net::steady_timer wakeup;  // expires at the longest wait; cancelled when the turn comes
        bool granted = false;
    };

    void pass_turn();

    net::any_io_executor m_executor;
    RunQueueOptions m_options;
    bool m_running = false;
    std::deque<Waiter*> m_line;  // in arrival order; each lives in its wait_turn() frame
};

}  // namespace pybox::daemon
