// A fake Docker engine for unit tests: an EngineDialer that serves one canned HTTP answer per
// connection over a socketpair and records each request's head. Single-threaded: everything
// runs on the fixture's io_context.
#pragma once

#include "daemon/engine/engine_client.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace pybox::test {

namespace net = boost::asio;
using engine::EngineClient;
using engine::EngineDialer;
using engine::Stream;
using engine::Timeout;

inline constexpr auto fake_engine_use_tuple = net::as_tuple(net::use_awaitable);

// Serves one canned answer per dial over a socketpair and records each request's head.
// An empty answer means the engine never replies (the connection stays open).
class FakeEngine final : public EngineDialer {
public:
    explicit FakeEngine(net::io_context& io) : m_io(io) {}

    void answer(std::string response) { m_answers.push_back(std::move(response)); }
    const std::vector<std::string>& requests() const { return m_requests; }

    net::awaitable<pybox::Expected<Stream>> dial(Timeout) override
    {
        REQUIRE_FALSE(m_answers.empty());
        Stream client(m_io);
        m_peers.emplace_back(m_io);
        net::local::connect_pair(client, m_peers.back());
        net::co_spawn(m_io, serve(m_peers.back(), m_answers.front()), [](std::exception_ptr) {});
        m_answers.pop_front();
        co_return client;
    }

    std::string describe() const override { return "fake"; }

private:
    net::awaitable<void> serve(Stream& peer, std::string answer)
    {
        std::string request;
        co_await net::async_read_until(peer, net::dynamic_buffer(request), "\r\n\r\n", fake_engine_use_tuple);
        m_requests.push_back(request.substr(0, request.find("\r\n\r\n")));
        if (!answer.empty()) {
            co_await net::async_write(peer, net::buffer(answer), fake_engine_use_tuple);
            peer.close();
        }
    }

    net::io_context& m_io;
    std::deque<std::string> m_answers;
    std::deque<Stream> m_peers;
    std::vector<std::string> m_requests;
};

inline std::string http_response(std::string_view status_line, std::string_view body, std::string_view extra = "")
{
    return "HTTP/1.1 " + std::string(status_line) + "\r\n" + std::string(extra) +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

inline std::string ping_response(std::string_view api_version)
{
    return http_response("200 OK", "OK", "Api-Version: " + std::string(api_version) + "\r\nOstype: linux\r\n");
}

// An EngineClient whose every dial reaches the FakeEngine; run() drives one call to its end.
struct EngineFixture {
    net::io_context io;
    FakeEngine* engine = nullptr;
    std::optional<EngineClient> client;

    EngineFixture()
    {
        auto fake = std::make_unique<FakeEngine>(io);
        engine = fake.get();
        client.emplace(io.get_executor(), std::move(fake));
    }

    template <class T>
    T run(net::awaitable<T> call)
    {
        std::optional<T> result;
        net::co_spawn(io, std::move(call), [&](std::exception_ptr e, T value) {
            if (e) std::rethrow_exception(e);
            result.emplace(std::move(value));
        });
        io.run();
        io.restart();
        REQUIRE(result);
        return std::move(*result);
    }
};


}  // namespace pybox::test
