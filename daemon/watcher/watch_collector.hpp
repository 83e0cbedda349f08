// WatchCollector: what a WatchSession keeps of a watcher's stdout as it arrives, whoever runs
// the watcher (LocalCgroupHost's child process, SshCgroupHost's exec channel): the text up to
// limits::k_watch_max_output_bytes (the rest dropped and `truncated` set), whether the header
// line has arrived (signals may be sent from then on), and when the first sample arrived.
// Not thread-safe; lives on the session's executor.
#pragma once

#include "common/clock.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <string_view>

namespace pybox::watcher {

struct WatchCollector {
    MonoClock::time_point started = MonoClock::now();
    WatchOutput output;
    bool header_seen = false;

    void take(std::string_view bytes);
};

// Reads a watcher's output until its end: each chunk to state->take(), then state->eof is set
// and state->output_ended cancelled. State has a readable `stream`, take(bytes), `eof` and a
// steady_timer `output_ended` (both hosts' watch states).
template <class State>
net::awaitable<void> read_watch_output(std::shared_ptr<State> state)
{
    std::array<char, 4096> buffer;
    for (;;) {
        auto [ec, got] = co_await state->stream.async_read_some(net::buffer(buffer), net::as_tuple(net::use_awaitable));
        if (got > 0) state->take(std::string_view(buffer.data(), got));
        if (ec) break;
    }
    state->eof = true;
    state->output_ended.cancel();
}

// Waits at most `timeout` for read_watch_output to reach the end of the output (state.eof);
// returns at once when it already has. The caller kills the watcher if it has not.
template <class State>
net::awaitable<void> wait_for_watch_end(State& state, std::chrono::milliseconds timeout)
{
    if (state.eof) co_return;
    net::steady_timer limit(co_await net::this_coro::executor, timeout);
    limit.async_wait([&state](const boost::system::error_code& ec) {
        if (!ec) state.output_ended.cancel();
    });
    co_await state.output_ended.async_wait(net::as_tuple(net::use_awaitable));
    limit.cancel();
}

}  // namespace pybox::watcher
