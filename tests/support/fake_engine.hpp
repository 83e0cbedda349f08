// A scriptable fake Docker engine for unit tests: an EngineDialer whose every dial gets one end
// of a socketpair; the fake reads the request on the other end and answers as scripted.
//
// Answers are chosen by method and a substring of the target (on()), each rule's replies in
// order with the last one repeated; requests no rule matches take the plain answers given to
// answer() in order; anything else gets a 500 and is listed in unscripted(). A Reply can be
// delayed, never come, drop the connection, or (attach, wait) send a head first and stream the
// rest now, when the fake box exits, or never, then close, reset or stay open. The fake box
// exits when a reply marked exits_box_after() has been answered and that time has passed.
//
// By default the fake closes a connection after a plain answer, as if the engine did; after
// keep_alive() it serves the next request on the same connection, as dockerd does, and (unless
// told otherwise) says that the client may keep connections. dials() counts the connections made.
//
// Single-threaded: everything runs on the fixture's io_context. Coroutines the fake starts may
// outlive a test's last call; they are destroyed with the io_context.
#pragma once

#include "daemon/engine/docker_box_engine.hpp"
#include "daemon/engine/engine_client.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pybox::test {

namespace net = boost::asio;
using engine::EngineClient;
using engine::EngineDialer;
using engine::Stream;
using engine::Timeout;
using std::chrono::milliseconds;

inline constexpr auto fake_engine_use_tuple = net::as_tuple(net::use_awaitable);

inline std::string http_response(std::string_view status_line, std::string_view body, std::string_view extra = "")
{
    return "HTTP/1.1 " + std::string(status_line) + "\r\n" + std::string(extra) +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

inline std::string ping_response(std::string_view api_version)
{
    return http_response("200 OK", "OK", "Api-Version: " + std::string(api_version) + "\r\nOstype: linux\r\n");
}

// When a streaming reply's `stream` bytes are sent after its head.
enum class Deliver { now, at_exit, never };
// What happens to the connection after them.
enum class StreamEnd {
    close,      // the fake stops sending (the client reads end of stream) and reads the client to its end
    reset,      // the fake closes without reading what the client sent: the client's next read fails
    stay_open,  // the connection stays open until the test ends
};

struct Reply {
    std::string head = {};  // written first (a whole plain answer, or the head of a streaming one)
    std::function<std::string()> head_from = {};  // when set, makes the head at answer time instead
    std::function<void()> on_arrival = {};  // when set, called as the request arrives, before any delay
    milliseconds delay{0};
    bool never = false;  // no answer; the connection stays open until the client closes it
    bool drop = false;   // the connection is closed without an answer
    std::optional<milliseconds> box_exit = {};  // answering makes the fake box exit this much later
    bool streaming = false;
    std::string stream = {};
    Deliver deliver = Deliver::now;
    StreamEnd end = StreamEnd::close;

    Reply after(milliseconds wait) const
    {
        Reply copy = *this;
        copy.delay = wait;
        return copy;
    }
    Reply when_it_arrives(std::function<void()> call) const
    {
        Reply copy = *this;
        copy.on_arrival = std::move(call);
        return copy;
    }
    Reply exits_box_after(milliseconds wait) const
    {
        Reply copy = *this;
        copy.box_exit = wait;
        return copy;
    }
};

inline Reply respond(std::string_view status_line, std::string_view body = "") { return {http_response(status_line, body)}; }
// A plain 200 answer whose JSON body is made when the request arrives.
inline Reply respond_with(std::function<std::string()> body)
{
    return Reply{.head_from = [body = std::move(body)] { return http_response("200 OK", body()); }};
}
inline Reply never_answers() { return Reply{.never = true}; }
inline Reply drops_connection() { return Reply{.drop = true}; }

// The hijacked attach: 101, then the multiplexed frames (tests/support/engine_frames.hpp).
inline Reply attach_stream(std::string frames, Deliver deliver = Deliver::at_exit, StreamEnd end = StreamEnd::close)
{
    return Reply{.head = "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                         "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n",
                 .streaming = true,
                 .stream = std::move(frames),
                 .deliver = deliver,
                 .end = end};
}

// The wait long-poll: the head at once (the wait is registered), the body at `deliver`.
inline Reply wait_answer(std::int64_t status_code, Deliver deliver = Deliver::at_exit)
{
    const std::string body = R"({"StatusCode":)" + std::to_string(status_code) + R"(,"Error":null})";
    return Reply{.head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n\r\n",
                 .streaming = true,
                 .stream = body,
                 .deliver = deliver,
                 .end = StreamEnd::close};
}

class FakeEngine final : public EngineDialer {
public:
    struct Request {
        std::string method;
        std::string target;
        std::string head;
        std::string body;
    };

    explicit FakeEngine(net::io_context& io) : m_io(io), m_exit(io, net::steady_timer::time_point::max()) {}

    // A plain answer for the next request no rule matches. Empty: the engine never replies.
    void answer(std::string response) { m_answers.push_back(std::move(response)); }
    // Replies, in order (the last repeats), to `method` requests whose target contains `target_part`.
    void on(std::string method, std::string target_part, std::vector<Reply> replies)
    {
        m_rules.push_back(Rule{std::move(method), std::move(target_part), std::deque<Reply>(replies.begin(), replies.end())});
    }

    // Heads of the requests received, in order.
    const std::vector<std::string>& requests() const { return m_heads; }
    const std::vector<Request>& received() const { return m_received; }
    std::size_t count(std::string_view method, std::string_view target_part) const
    {
        std::size_t n = 0;
        for (const auto& request : m_received)
            if (request.method == method && request.target.find(target_part) != std::string::npos) ++n;
        return n;
    }
    const std::vector<std::string>& unscripted() const { return m_unscripted; }
    // What clients sent on streams that ended with StreamEnd::close (the attach's stdin), in order.
    const std::vector<std::string>& streamed_in() const { return m_streamed_in; }
    bool box_exited() const { return m_box_exited; }

    // The engine goes away, as a killed dockerd does: every open connection is closed and every
    // dial is refused (engine_unreachable) until come_back().
    void go_away()
    {
        m_gone = true;
        boost::system::error_code ignored;
        for (auto& peer : m_peers) peer->close(ignored);
        m_peers.clear();
    }
    void come_back() { m_gone = false; }
    // From now on a connection stays open after a plain answer for the next request;
    // `client_keeps` is the dialer's keeps_connections().
    void keep_alive(bool client_keeps = true)
    {
        m_keep_alive = true;
        m_client_keeps = client_keeps;
    }
    bool keeps_connections() const override { return m_client_keeps; }
    // The engine closes every open connection (idle ones too) but still accepts new ones.
    void close_connections()
    {
        boost::system::error_code ignored;
        for (auto& peer : m_peers) peer->close(ignored);
        m_peers.clear();
    }
    std::size_t dials() const { return m_dials; }

    net::awaitable<pybox::Expected<Stream>> dial(Timeout) override
    {
        if (m_gone) co_return pybox::make_error("engine_unreachable", "cannot connect to fake: Connection refused");
        ++m_dials;
        Stream client(m_io);
        auto peer = std::make_shared<Stream>(m_io);
        net::local::connect_pair(client, *peer);
        m_peers.push_back(peer);
        net::co_spawn(m_io, serve(peer), [](std::exception_ptr) {});
        co_return client;
    }

    std::string describe() const override { return "fake"; }

private:
    struct Rule {
        std::string method;
        std::string target_part;
        std::deque<Reply> replies;
    };

    Reply choose(const Request& request)
    {
        for (auto& rule : m_rules) {
            if (rule.method != request.method || request.target.find(rule.target_part) == std::string::npos) continue;
            Reply reply = rule.replies.front();
            if (rule.replies.size() > 1) rule.replies.pop_front();
            return reply;
        }
        if (!m_answers.empty()) {
            Reply reply{m_answers.front()};
            reply.never = reply.head.empty();
            m_answers.pop_front();
            return reply;
        }
        m_unscripted.push_back(request.method + " " + request.target);
        return respond("500 Internal Server Error", R"({"message":"unscripted request"})");
    }

    void schedule_exit(milliseconds wait)
    {
        net::co_spawn(
            m_io,
            [this, wait]() -> net::awaitable<void> {
                net::steady_timer timer(m_io, wait);
                co_await timer.async_wait(fake_engine_use_tuple);
                m_box_exited = true;
                m_exit.cancel();
            },
            [](std::exception_ptr) {});
    }

    // Reads until the client closes its sending side (or the connection).
    // Reads what the client sends until it closes; returns the first 1 MiB of it.
    static net::awaitable<std::string> read_to_end(Stream& peer)
    {
        std::string sink(4096, '\0');
        std::string kept;
        for (;;) {
            auto [ec, n] = co_await peer.async_read_some(net::buffer(sink), fake_engine_use_tuple);
            if (ec) co_return kept;
            if (kept.size() < (1u << 20)) kept.append(sink, 0, n);
        }
    }

    net::awaitable<void> serve(std::shared_ptr<Stream> peer)
    {
        std::string data;
        for (;;) {
            auto [ec, n] = co_await net::async_read_until(*peer, net::dynamic_buffer(data), "\r\n\r\n", fake_engine_use_tuple);
            if (ec) co_return;
            Request request;
            request.head = data.substr(0, n - 4);
            request.method = request.head.substr(0, request.head.find(' '));
            const auto target_start = request.method.size() + 1;
            request.target = request.head.substr(target_start, request.head.find(' ', target_start) - target_start);
            std::size_t length = 0;
            for (std::string_view header : {"Content-Length: ", "content-length: "})
                if (const auto at = request.head.find(header); at != std::string::npos)
                    length = std::stoul(request.head.substr(at + header.size()));
            std::string body = data.substr(n, length);
            data.erase(0, n + body.size());
            if (body.size() < length) {
                std::string rest(length - body.size(), '\0');
                auto [read_ec, read_n] = co_await net::async_read(*peer, net::buffer(rest), fake_engine_use_tuple);
                if (read_ec) co_return;
                body += rest;
            }
            request.body = std::move(body);
            m_heads.push_back(request.head);
            const Reply reply = choose(request);
            m_received.push_back(std::move(request));
            if (!co_await answer(*peer, reply)) co_return;
        }
    }

    // Answers one request; true when the connection stays open for the next one.
    net::awaitable<bool> answer(Stream& peer, const Reply& reply)
    {
        if (reply.on_arrival) reply.on_arrival();
        if (reply.never) {
            co_await read_to_end(peer);
            co_return false;
        }
        if (reply.drop) {
            peer.close();
            co_return false;
        }
        if (reply.delay.count() > 0) {
            net::steady_timer timer(m_io, reply.delay);
            co_await timer.async_wait(fake_engine_use_tuple);
        }
        const std::string head = reply.head_from ? reply.head_from() : reply.head;
        auto [write_ec, written] = co_await net::async_write(peer, net::buffer(head), fake_engine_use_tuple);
        if (reply.box_exit) schedule_exit(*reply.box_exit);
        if (write_ec) co_return false;
        if (!reply.streaming) {
            if (m_keep_alive) co_return true;
            peer.close();
            co_return false;
        }
        if (reply.deliver == Deliver::never) co_return false;
        if (reply.deliver == Deliver::at_exit && !m_box_exited)
            co_await m_exit.async_wait(fake_engine_use_tuple);
        co_await net::async_write(peer, net::buffer(reply.stream), fake_engine_use_tuple);
        boost::system::error_code ignored;
        switch (reply.end) {
        case StreamEnd::close:
            peer.shutdown(net::socket_base::shutdown_send, ignored);
            m_streamed_in.push_back(co_await read_to_end(peer));
            peer.close(ignored);
            break;
        case StreamEnd::reset:
            peer.close(ignored);
            break;
        case StreamEnd::stay_open:
            break;
        }
        co_return false;
    }

    net::io_context& m_io;
    net::steady_timer m_exit;  // cancelled when the fake box exits
    bool m_box_exited = false;
    bool m_gone = false;
    bool m_keep_alive = false;
    bool m_client_keeps = false;
    std::size_t m_dials = 0;
    std::vector<Rule> m_rules;
    std::deque<std::string> m_answers;
    std::vector<std::shared_ptr<Stream>> m_peers;
    std::vector<std::string> m_heads;
    std::vector<Request> m_received;
    std::vector<std::string> m_unscripted;
    std::vector<std::string> m_streamed_in;
};

// Drives one coroutine on `io` until it has finished; work the fake left pending (open
// streams, a box that never exits) stays queued. T need not be default-constructible (as
// co_spawn's handler needs): the result is passed on in an optional.
template <class T>
T run_to_result(net::io_context& io, net::awaitable<T> call)
{
    std::optional<T> result;
    std::exception_ptr failure;
    auto optional_of = [](net::awaitable<T> inner) -> net::awaitable<std::optional<T>> {
        co_return std::optional<T>(co_await std::move(inner));
    };
    net::co_spawn(io, optional_of(std::move(call)), [&](std::exception_ptr e, std::optional<T> value) {
        if (e) {
            failure = e;
        } else {
            result = std::move(value);
        }
    });
    while (!result && !failure && io.run_one() > 0) {
    }
    if (io.stopped()) io.restart();
    if (failure) std::rethrow_exception(failure);
    REQUIRE(result);
    return std::move(*result);
}

// The same for a coroutine without a result.
inline void run_to_end(net::io_context& io, net::awaitable<void> call)
{
    auto with_result = [](net::awaitable<void> inner) -> net::awaitable<bool> {
        co_await std::move(inner);
        co_return true;
    };
    run_to_result(io, with_result(std::move(call)));
}

// An EngineClient whose every dial reaches the FakeEngine, and the Docker BoxEngine over it;
// run() drives one call to its end.
struct EngineFixture {
    net::io_context io;
    FakeEngine* engine = nullptr;
    std::optional<EngineClient> client;
    std::optional<engine::DockerBoxEngine> boxes;

    EngineFixture()
    {
        auto fake = std::make_unique<FakeEngine>(io);
        engine = fake.get();
        client.emplace(io.get_executor(), std::move(fake));
        boxes.emplace(*client, "runc");
    }

    template <class T>
    T run(net::awaitable<T> call)
    {
        return run_to_result(io, std::move(call));
    }
};

}  // namespace pybox::test
