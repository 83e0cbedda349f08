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

namespace net = boost::asio;
using namespace pybox::engine;
using namespace std::chrono_literals;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

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
        co_await net::async_read_until(peer, net::dynamic_buffer(request), "\r\n\r\n", use_tuple);
        m_requests.push_back(request.substr(0, request.find("\r\n\r\n")));
        if (!answer.empty()) {
            co_await net::async_write(peer, net::buffer(answer), use_tuple);
            peer.close();
        }
    }

    net::io_context& m_io;
    std::deque<std::string> m_answers;
    std::deque<Stream> m_peers;
    std::vector<std::string> m_requests;
};

std::string http_response(std::string_view status_line, std::string_view body, std::string_view extra = "")
{
    return "HTTP/1.1 " + std::string(status_line) + "\r\n" + std::string(extra) +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

std::string ping_response(std::string_view api_version)
{
    return http_response("200 OK", "OK", "Api-Version: " + std::string(api_version) + "\r\nOstype: linux\r\n");
}

struct Fixture {
    net::io_context io;
    FakeEngine* engine = nullptr;
    std::optional<EngineClient> client;

    Fixture()
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

}  // namespace

TEST_CASE("Ping caps the negotiated API version at 1.41 and later calls use it")
{
    Fixture f;
    f.engine->answer(ping_response("1.43"));
    f.engine->answer(http_response("200 OK", R"({"ServerVersion":"x"})"));
    const auto ping = f.run(f.client->ping(1s));
    REQUIRE(ping.has_value());
    CHECK(ping->api_version == "1.43");
    CHECK(ping->negotiated == "1.41");
    CHECK(ping->os_type == "linux");
    REQUIRE(f.run(f.client->info(1s)).has_value());
    CHECK(f.engine->requests().at(0).starts_with("GET /_ping HTTP/1.1"));
    CHECK(f.engine->requests().at(1).starts_with("GET /v1.41/info HTTP/1.1"));
}

TEST_CASE("Ping compares API versions numerically")
{
    Fixture f;
    f.engine->answer(ping_response("1.9"));
    const auto ping = f.run(f.client->ping(1s));
    REQUIRE(ping.has_value());
    CHECK(ping->negotiated == "1.9");
    CHECK(f.client->api_version() == "1.9");
}

TEST_CASE("Ping without an Api-Version header is a protocol error")
{
    Fixture f;
    f.engine->answer(http_response("200 OK", "OK"));
    const auto ping = f.run(f.client->ping(1s));
    REQUIRE_FALSE(ping.has_value());
    CHECK(ping.error().code == "engine_protocol");
}

TEST_CASE("A 404 maps to not_found and other failures to engine_error with the engine's message")
{
    Fixture f;
    f.engine->answer(http_response("404 Not Found", R"({"message":"No such container: c1"})"));
    f.engine->answer(http_response("500 Internal Server Error", R"({"message":"boom"})"));
    const auto missing = f.run(f.client->inspect_container("c1", 1s));
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == "not_found");
    const auto broken = f.run(f.client->start_container("c1", 1s));
    REQUIRE_FALSE(broken.has_value());
    CHECK(broken.error().code == "engine_error");
    CHECK(broken.error().message.find("boom") != std::string::npos);
}

TEST_CASE("A response body over the cap is a protocol error")
{
    Fixture f;
    f.engine->answer("HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n{");
    const auto info = f.run(f.client->info(1s));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == "engine_protocol");
}

TEST_CASE("An engine that never answers gives engine_timeout")
{
    Fixture f;
    f.engine->answer("");
    const auto info = f.run(f.client->info(100ms));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == "engine_timeout");
}

TEST_CASE("Create sends the name URL-encoded and accepts null Warnings")
{
    Fixture f;
    f.engine->answer(http_response("201 Created", R"({"Id":"abc","Warnings":null})"));
    const boost::json::object spec{{"Image", "img"}};
    const auto created = f.run(f.client->create_container(spec, "a b/c", 1s));
    REQUIRE(created.has_value());
    CHECK(created->id == "abc");
    CHECK(created->warnings.empty());
    CHECK(f.engine->requests().at(0).starts_with("POST /containers/create?name=a%20b%2Fc HTTP/1.1"));
}

TEST_CASE("Kill of a stopped container reports not_running")
{
    Fixture f;
    f.engine->answer(http_response("409 Conflict", R"({"message":"is not running"})"));
    const auto outcome = f.run(f.client->kill_container("c1", "SIGKILL", 1s));
    REQUIRE(outcome.has_value());
    CHECK(*outcome == KillOutcome::not_running);
}

TEST_CASE("Attach hands bytes that came with the 101 response to the first read")
{
    Fixture f;
    f.engine->answer(
        "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
        "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\nraw-bytes");
    auto session = f.run(f.client->attach("c1", 1s));
    REQUIRE(session.has_value());
    CHECK(f.engine->requests().at(0).find("Upgrade: tcp") != std::string::npos);
    std::string received;
    for (;;) {
        auto chunk = f.run((*session)->read_some());
        REQUIRE(chunk.has_value());
        if (chunk->empty()) break;
        received += *chunk;
    }
    CHECK(received == "raw-bytes");
}
