// RunQueue: runs take turns, max_running at a time (one by default; a cluster's "max_runs"), with
// a bounded line behind the running ones (by
// default common/limits.hpp's k_max_waiting_runs places and k_max_queue_wait). Each run is a
// user's (its owner uid); users take turns: the next turn goes to the first in line whose user
// got a turn the longest ago (or never), so one user's many runs cannot starve another's; one
// user's runs go in arrival order. One user holds at most max_waiting_per_owner places.
//
// Not thread-safe: use it from the daemon's one executor. The queue must outlive every Turn and
// every wait_turn() in progress.
//
// wait_turn() answers at once with a Turn while fewer than max_running run; at once with "busy" when every
// place in line (or every place its user may hold) is taken; otherwise it waits in line and answers with the Turn when the one
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
#include <cstdint>
#include <deque>
#include <map>
#include <utility>

namespace pybox::daemon {

namespace net = boost::asio;

struct RunQueueOptions {
    std::size_t max_waiting = limits::k_max_waiting_runs;
    std::chrono::milliseconds max_wait = limits::k_max_queue_wait;
    std::size_t max_waiting_per_owner = limits::k_max_waiting_runs;
    std::size_t max_running = 1;  // at least 1
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

    net::awaitable<Expected<Turn>> wait_turn(std::uint32_t owner, net::cancellation_slot leave);

    // Runs waiting in line (not counting the running one).
    std::size_t waiting() const { return m_line.size(); }
    // Whether a run holds its turn now.
    bool running() const { return m_running > 0; }

private:
    struct Waiter {
        Waiter(std::uint32_t owner_uid, net::steady_timer timer) : owner(owner_uid), wakeup(std::move(timer)) {}
        std::uint32_t owner;
        net::steady_timer wakeup;  // expires at the longest wait; cancelled when the turn comes
        bool granted = false;
    };

    void pass_turn();
    void record_turn(std::uint32_t owner);

    static constexpr std::size_t k_max_remembered_owners = 4096;

    net::any_io_executor m_executor;
    RunQueueOptions m_options;
    std::size_t m_running = 0;  // turns held now
    std::deque<Waiter*> m_line;  // in arrival order; each lives in its wait_turn() frame
    std::uint64_t m_turns = 0;   // turns given so far
    std::map<std::uint32_t, std::uint64_t> m_last_turn;  // owner -> the number of its latest turn
};

}  // namespace pybox::daemon
