// KeptConnections: the idle Engine API connections of one EngineClient (so of one dialer), kept
// between plain request/response exchanges (HTTP/1.1 keep-alive) so that a call need not dial,
// when its dialer keeps connections (EngineDialer::keeps_connections: the ssh dialer, where a
// dial is an exec channel of a few ms and a request on a kept one a fraction of a ms).
//
// At most k_kept_connections are kept, each for at most k_kept_idle (well under the idle time
// after which engines or proxies in front of them may close a connection); one is enough since a
// run's plain calls are sequential, and it keeps the daemon's fd count the same after every run.
// A connection the engine closed (or wrote to unasked) is found when it is taken: it is closed
// instead of handed out. Only connections whose exchange ended cleanly with a keep-alive answer
// are given back (engine_http.cpp decides); streams (attach, wait, image uploads and exports)
// hold their own connection and never come here.
//
// Owns the kept sockets and closes them when destroyed. Not thread-safe: used on the
// EngineClient's executor only.
#pragma once

#include <boost/asio/local/stream_protocol.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>

namespace pybox::engine {

inline constexpr std::size_t k_kept_connections = 1;
inline constexpr std::chrono::seconds k_kept_idle{30};

class KeptConnections {
public:
    using Stream = boost::asio::local::stream_protocol::socket;
    using Clock = std::chrono::steady_clock;

    // A kept connection that is still open and idle, or nullopt (then dial).
    std::optional<Stream> take();
    // Keeps `stream` for the next exchange; beyond k_kept_connections the oldest is closed.
    void keep(Stream stream);
    // Closes every kept connection (one of them failed: the others are as old).
    void clear();
    std::size_t size() const { return m_idle.size(); }

private:
    struct Idle {
        Stream stream;
        Clock::time_point since;
    };
    std::deque<Idle> m_idle;
};

}  // namespace pybox::engine
