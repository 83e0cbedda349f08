#include "daemon/engine/engine_client.hpp"
#include "common/files.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace net = boost::asio;
using namespace pybox::engine;
using namespace std::chrono_literals;

using pybox::test::EngineFixture;
using pybox::test::http_response;
using pybox::test::ping_response;

TEST_CASE("Ping caps the negotiated API version at 1.41 and later calls use it")
{
    EngineFixture f;
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
    EngineFixture f;
    f.engine->answer(ping_response("1.9"));
    const auto ping = f.run(f.client->ping(1s));
    REQUIRE(ping.has_value());
    CHECK(ping->negotiated == "1.9");
    CHECK(f.client->api_version() == "1.9");
}

TEST_CASE("Ping without an Api-Version header is a protocol error")
{
    EngineFixture f;
    f.engine->answer(http_response("200 OK", "OK"));
    const auto ping = f.run(f.client->ping(1s));
    REQUIRE_FALSE(ping.has_value());
    CHECK(ping.error().code == "engine_protocol");
}

TEST_CASE("A 404 maps to engine_no_such_object and other failures to engine_error with the engine's message")
{
    EngineFixture f;
    f.engine->answer(http_response("404 Not Found", R"({"message":"No such container: c1"})"));
    f.engine->answer(http_response("500 Internal Server Error", R"({"message":"boom"})"));
    const auto missing = f.run(f.client->inspect_container("c1", 1s));
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == "engine_no_such_object");
    const auto broken = f.run(f.client->start_container("c1", 1s));
    REQUIRE_FALSE(broken.has_value());
    CHECK(broken.error().code == "engine_error");
    CHECK(broken.error().message.find("boom") != std::string::npos);
}

TEST_CASE("A response body over the cap is a protocol error")
{
    EngineFixture f;
    f.engine->answer("HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n{");
    const auto info = f.run(f.client->info(1s));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == "engine_protocol");
}

TEST_CASE("An engine that never answers gives engine_timeout")
{
    EngineFixture f;
    f.engine->answer("");
    const auto info = f.run(f.client->info(100ms));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == "engine_timeout");
}

TEST_CASE("Create sends the name URL-encoded and accepts null Warnings")
{
    EngineFixture f;
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
    EngineFixture f;
    f.engine->answer(http_response("409 Conflict", R"({"message":"is not running"})"));
    const auto outcome = f.run(f.client->kill_container("c1", "SIGKILL", 1s));
    REQUIRE(outcome.has_value());
    CHECK(*outcome == KillOutcome::not_running);
}

TEST_CASE("Attach hands bytes that came with the 101 response to the first read")
{
    EngineFixture f;
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

TEST_CASE("Load sends the tar as the body and answers the image ID the engine reports as loaded")
{
    pybox::test::TempRuntime runtime;
    const auto tar = runtime.root / "image.tar";
    REQUIRE(pybox::write_file_atomic(tar, "tar bytes").has_value());
    EngineFixture f;
    const std::string id = "sha256:" + std::string(64, 'e');
    f.engine->answer(http_response("200 OK", R"({"stream":"Loaded image ID: )" + id + R"(\n"})" "\n"));
    const auto loaded = f.run(f.client->load_image(tar, 1s));
    REQUIRE(loaded.has_value());
    CHECK(*loaded == id);
    REQUIRE(f.engine->received().size() == 1);
    CHECK(f.engine->received()[0].method == "POST");
    CHECK(f.engine->received()[0].target == "/images/load?quiet=1");
    CHECK(f.engine->received()[0].body == "tar bytes");
}

TEST_CASE("A load whose stream holds an error, or names no image, is refused")
{
    pybox::test::TempRuntime runtime;
    const auto tar = runtime.root / "image.tar";
    REQUIRE(pybox::write_file_atomic(tar, "x").has_value());
    EngineFixture f;
    f.engine->answer(http_response("200 OK", R"({"error":"unexpected EOF"})" "\n"));
    f.engine->answer(http_response("200 OK", R"({"stream":"Loaded image: pybox-x:1\n"})" "\n"));
    const auto failed = f.run(f.client->load_image(tar, 1s));
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == "engine_error");
    CHECK_THAT(failed.error().message, Catch::Contains("unexpected EOF"));
    const auto unnamed = f.run(f.client->load_image(tar, 1s));
    REQUIRE_FALSE(unnamed.has_value());
    CHECK(unnamed.error().code == "engine_protocol");
}

TEST_CASE("Export writes the engine's tar to the file, and refuses one over the cap or a missing image")
{
    pybox::test::TempRuntime runtime;
    const auto tar = runtime.root / "out.tar";
    EngineFixture f;
    f.engine->answer(http_response("200 OK", "0123456789"));
    f.engine->answer(http_response("200 OK", "0123456789"));
    f.engine->answer(http_response("404 Not Found", R"({"message":"reference does not exist"})"));
    REQUIRE(f.run(f.client->export_image("sha256:abc", tar, 100, 1s)).has_value());
    CHECK(pybox::read_file_capped(tar, 100).value() == "0123456789");
    CHECK(f.engine->received()[0].target == "/images/sha256%3Aabc/get");
    const auto too_big = f.run(f.client->export_image("sha256:abc", tar, 5, 1s));
    REQUIRE_FALSE(too_big.has_value());
    CHECK(too_big.error().code == "engine_protocol");
    const auto missing = f.run(f.client->export_image("sha256:abc", tar, 100, 1s));
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == "engine_no_such_object");
}
