// RunQueue: one run at a time (or max_running), in arrival order, a bounded line behind it, a bounded wait in
// it, and a place freed at once when its client leaves. Timers only; no engine.
#include "daemon/run/run_queue.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;
using pybox::daemon::RunQueue;
using pybox::daemon::RunQueueOptions;
using Clock = std::chrono::steady_clock;

constexpr auto k_tuple = net::as_tuple(net::use_awaitable);

net::awaitable<void> pause(std::chrono::milliseconds how_long)
{
    net::steady_timer timer(co_await net::this_coro::executor, how_long);
    co_await timer.async_wait(k_tuple);
}

// What happened to each caller, in the order it happened: "name" when it got its turn,
// "name:code" when it was refused.
struct Log {
    std::vector<std::string> events;
    std::vector<std::string> errors;  // the messages of the refusals
};

// Arrives after `arrive`, waits for its turn, holds it for `hold`.
net::awaitable<void> caller(RunQueue& queue, Log& log, std::string name, std::chrono::milliseconds arrive,
                            std::chrono::milliseconds hold, net::cancellation_slot leave = {}, std::uint32_t owner = 0)
{
    co_await pause(arrive);
    auto turn = co_await queue.wait_turn(owner, leave);
    if (!turn) {
        log.events.push_back(name + ":" + turn.error().code);
        log.errors.push_back(turn.error().message);
        co_return;
    }
    log.events.push_back(name);
    co_await pause(hold);
}

// After `after`, fires `leave` (when given) and then notes how many wait in line.
net::awaitable<void> note_waiting(RunQueue& queue, std::chrono::milliseconds after, std::size_t& waiting,
                                  net::cancellation_signal* leave = nullptr)
{
    co_await pause(after);
    if (leave) {
        leave->emit(net::cancellation_type::terminal);
        co_await pause(1ms);
    }
    waiting = queue.waiting();
}

void spawn(net::io_context& io, net::awaitable<void> work) { net::co_spawn(io, std::move(work), net::detached); }

}  // namespace

TEST_CASE("Runs take their turns one at a time in arrival order")
{
    net::io_context io;
    RunQueue queue(io.get_executor());
    Log log;
    const auto begun = Clock::now();
    spawn(io, caller(queue, log, "a", 0ms, 40ms));
    spawn(io, caller(queue, log, "b", 5ms, 40ms));
    spawn(io, caller(queue, log, "c", 10ms, 40ms));
    spawn(io, caller(queue, log, "d", 15ms, 40ms));
    io.run();
    CHECK(log.events == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(Clock::now() - begun >= 160ms);  // never two at once
    CHECK(queue.waiting() == 0);
}

TEST_CASE("An engine that takes several runs at once gives that many turns at once, then queues")
{
    net::io_context io;
    RunQueueOptions options;
    options.max_running = 3;
    RunQueue queue(io.get_executor(), options);
    Log log;
    const auto begun = Clock::now();
    for (const char* name : {"a", "b", "c", "d"}) spawn(io, caller(queue, log, name, 0ms, 60ms));
    std::size_t waiting_at_start = 0;
    spawn(io, note_waiting(queue, 20ms, waiting_at_start));
    io.run();
    CHECK(log.events == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(waiting_at_start == 1);  // three hold their turns at once, d waits behind them
    CHECK(Clock::now() - begun >= 120ms);  // d waited for a place
    CHECK_FALSE(queue.running());
}

TEST_CASE("A run that finds every place in line taken is answered busy at once, and nothing is queued for it")
{
    net::io_context io;
    RunQueue queue(io.get_executor(), RunQueueOptions{2, 10s});
    Log log;
    spawn(io, caller(queue, log, "a", 0ms, 100ms));
    spawn(io, caller(queue, log, "b", 5ms, 10ms));
    spawn(io, caller(queue, log, "c", 10ms, 10ms));
    spawn(io, caller(queue, log, "d", 20ms, 10ms));
    std::size_t waiting_when_refused = 0;
    spawn(io, note_waiting(queue, 50ms, waiting_when_refused));
    io.run();
    CHECK(log.events == std::vector<std::string>{"a", "d:busy", "b", "c"});
    CHECK(waiting_when_refused == 2);
    REQUIRE(log.errors.size() == 1);
    CHECK_THAT(log.errors[0], Catch::Contains("busy") && Catch::Contains("nothing ran") && Catch::Contains("Retry in"));
}

TEST_CASE("A run whose turn does not come within the longest queue wait is answered busy and its place freed")
{
    net::io_context io;
    RunQueue queue(io.get_executor(), RunQueueOptions{1, 50ms});
    Log log;
    spawn(io, caller(queue, log, "a", 0ms, 130ms));
    spawn(io, caller(queue, log, "b", 5ms, 10ms));     // gives up at 55 ms
    spawn(io, caller(queue, log, "c", 100ms, 10ms));  // takes the place b held; its turn comes at 130 ms
    io.run();
    CHECK(log.events == std::vector<std::string>{"a", "b:busy", "c"});
    REQUIRE(log.errors.size() == 1);
    CHECK_THAT(log.errors[0], Catch::Contains("waited") && Catch::Contains("nothing ran"));
}

TEST_CASE("A run whose client leaves while it waits gives up its place at once and never gets the turn")
{
    net::io_context io;
    RunQueue queue(io.get_executor(), RunQueueOptions{1, 10s});
    Log log;
    net::cancellation_signal b_leaves;
    std::size_t waiting_after_leaving = 1;
    spawn(io, caller(queue, log, "a", 0ms, 100ms));
    spawn(io, caller(queue, log, "b", 5ms, 10ms, b_leaves.slot()));
    spawn(io, note_waiting(queue, 20ms, waiting_after_leaving, &b_leaves));
    spawn(io, caller(queue, log, "c", 30ms, 10ms));  // takes the freed place
    io.run();
    CHECK(log.events == std::vector<std::string>{"a", "b:client_disconnected", "c"});
    CHECK(waiting_after_leaving == 0);
}

TEST_CASE("The turn is free again once the last run drops it")
{
    net::io_context io;
    RunQueue queue(io.get_executor(), RunQueueOptions{0, 10s});
    Log log;
    spawn(io, caller(queue, log, "a", 0ms, 20ms));
    spawn(io, caller(queue, log, "b", 5ms, 10ms));   // no place in line at all: busy
    spawn(io, caller(queue, log, "c", 40ms, 10ms));  // after a is done: runs at once
    io.run();
    CHECK(log.events == std::vector<std::string>{"a", "b:busy", "c"});
}

TEST_CASE("Users take turns: the next turn goes to the user whose last turn is the oldest, each user's runs in order")
{
    net::io_context io;
    RunQueue queue(io.get_executor());
    Log log;
    constexpr std::uint32_t alice = 1001, bob = 1002, carol = 1003;
    spawn(io, caller(queue, log, "a1", 0ms, 30ms, {}, alice));
    spawn(io, caller(queue, log, "a2", 2ms, 10ms, {}, alice));
    spawn(io, caller(queue, log, "a3", 4ms, 10ms, {}, alice));
    spawn(io, caller(queue, log, "a4", 6ms, 10ms, {}, alice));
    spawn(io, caller(queue, log, "b1", 8ms, 10ms, {}, bob));
    spawn(io, caller(queue, log, "b2", 10ms, 10ms, {}, bob));
    spawn(io, caller(queue, log, "c1", 12ms, 10ms, {}, carol));
    io.run();
    // Bob and Carol, who never had a turn, go before Alice's second run; then they alternate.
    CHECK(log.events == std::vector<std::string>{"a1", "b1", "c1", "a2", "b2", "a3", "a4"});
}

TEST_CASE("One user may hold only its share of the line; another user still gets a place")
{
    net::io_context io;
    RunQueue queue(io.get_executor(), RunQueueOptions{4, 10s, 2});
    Log log;
    constexpr std::uint32_t alice = 1001, bob = 1002;
    spawn(io, caller(queue, log, "a1", 0ms, 40ms, {}, alice));
    spawn(io, caller(queue, log, "a2", 2ms, 5ms, {}, alice));
    spawn(io, caller(queue, log, "a3", 4ms, 5ms, {}, alice));
    spawn(io, caller(queue, log, "a4", 6ms, 5ms, {}, alice));  // a third waiting run of Alice's
    spawn(io, caller(queue, log, "b1", 8ms, 5ms, {}, bob));
    io.run();
    CHECK(log.events == std::vector<std::string>{"a1", "a4:busy", "b1", "a2", "a3"});
    REQUIRE(log.errors.size() == 1);
    CHECK_THAT(log.errors[0], Catch::Contains("for one user") && Catch::Contains("nothing ran"));
}
