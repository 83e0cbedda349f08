// Engine API connections kept between plain calls (daemon/engine/kept_connections.hpp and
// exchange_raw in engine_http.cpp), against the fake engine in keep-alive mode.
#include "daemon/engine/kept_connections.hpp"
#include "daemon/engine/engine_client.hpp"
#include "tests/support/fake_engine.hpp"

#include <boost/asio/local/connect_pair.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace net = boost::asio;
using namespace pybox::engine;
using namespace pybox::test;
using namespace std::chrono_literals;

namespace {

// Both ends of a fresh connection.
std::pair<Stream, Stream> connection(net::io_context& io)
{
    Stream ours(io);
    Stream theirs(io);
    net::local::connect_pair(ours, theirs);
    return {std::move(ours), std::move(theirs)};
}

}  // namespace

TEST_CASE("Sequential calls share one kept connection")
{
    EngineFixture f;
    f.engine->keep_alive();
    f.engine->answer(ping_response("1.41"));
    for (int i = 0; i < 3; ++i) f.engine->answer(http_response("200 OK", R"({"ServerVersion":"x"})"));
    REQUIRE(f.run(f.client->ping(1s)).has_value());
    for (int i = 0; i < 3; ++i) REQUIRE(f.run(f.client->info(1s)).has_value());
    CHECK(f.engine->requests().size() == 4);
    CHECK(f.engine->dials() == 1);
}

TEST_CASE("Through a dialer that does not keep connections (a unix socket) every call dials, as before")
{
    EngineFixture f;
    f.engine->keep_alive(false);
    for (int i = 0; i < 3; ++i) f.engine->answer(http_response("200 OK", "{}"));
    for (int i = 0; i < 3; ++i) REQUIRE(f.run(f.client->info(1s)).has_value());
    CHECK(f.engine->dials() == 3);
}

TEST_CASE("A kept connection the engine closed is replaced without the caller seeing it")
{
    EngineFixture f;
    f.engine->keep_alive();
    f.engine->answer(ping_response("1.41"));
    f.engine->answer(http_response("200 OK", R"({"ServerVersion":"x"})"));
    REQUIRE(f.run(f.client->ping(1s)).has_value());
    f.engine->close_connections();
    const auto info = f.run(f.client->info(1s));
    REQUIRE(info.has_value());
    CHECK(f.engine->dials() == 2);
}

TEST_CASE("An answer that says Connection: close is not kept")
{
    EngineFixture f;
    f.engine->keep_alive();
    const std::string closing = http_response("200 OK", "{}", "Connection: close\r\n");
    f.engine->answer(closing);
    f.engine->answer(closing);
    REQUIRE(f.run(f.client->info(1s)).has_value());
    REQUIRE(f.run(f.client->info(1s)).has_value());
    CHECK(f.engine->dials() == 2);
}

TEST_CASE("A GET the engine drops unanswered on a kept connection is sent again on a fresh one")
{
    EngineFixture f;
    f.engine->keep_alive();
    f.engine->on("GET", "/info", {respond("200 OK", "{}"), drops_connection(), respond("200 OK", R"({"ID":"again"})")});
    REQUIRE(f.run(f.client->info(1s)).has_value());
    const auto info = f.run(f.client->info(1s));
    REQUIRE(info.has_value());
    CHECK(info->raw.at("ID") == "again");
    CHECK(f.engine->count("GET", "/info") == 3);
    CHECK(f.engine->dials() == 2);
}

TEST_CASE("A POST the engine drops unanswered on a kept connection fails and is never sent again")
{
    EngineFixture f;
    f.engine->keep_alive();
    f.engine->answer(ping_response("1.41"));
    f.engine->on("POST", "/start", {drops_connection(), respond("204 No Content")});
    REQUIRE(f.run(f.client->ping(1s)).has_value());
    const auto started = f.run(f.client->start_container("c1", 1s));
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "engine_protocol");
    CHECK(f.engine->count("POST", "/start") == 1);
    CHECK(f.engine->dials() == 1);
}

TEST_CASE("A drop on a fresh connection is an error as before, not a second try")
{
    EngineFixture f;
    f.engine->keep_alive();
    f.engine->on("GET", "/info", {drops_connection(), respond("200 OK", "{}")});
    const auto info = f.run(f.client->info(1s));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == "engine_protocol");
    CHECK(f.engine->count("GET", "/info") == 1);
}

TEST_CASE("At most one idle connection is kept, the newest")
{
    net::io_context io;
    KeptConnections kept;
    auto [first, first_peer] = connection(io);
    auto [second, second_peer] = connection(io);
    const auto second_handle = second.native_handle();
    kept.keep(std::move(first));
    kept.keep(std::move(second));
    CHECK(kept.size() == 1);
    auto taken = kept.take();
    REQUIRE(taken.has_value());
    CHECK(taken->native_handle() == second_handle);
    CHECK_FALSE(kept.take().has_value());
}

TEST_CASE("A kept connection that was closed or has unasked bytes waiting is not handed out")
{
    net::io_context io;
    KeptConnections kept;
    auto [closed, closed_peer] = connection(io);
    closed_peer.close();
    kept.keep(std::move(closed));
    CHECK_FALSE(kept.take().has_value());

    auto [chatty, chatty_peer] = connection(io);
    net::write(chatty_peer, net::buffer(std::string("HTTP/1.1 408 Request Timeout\r\n\r\n")));
    kept.keep(std::move(chatty));
    CHECK_FALSE(kept.take().has_value());
    CHECK(kept.size() == 0);
}
