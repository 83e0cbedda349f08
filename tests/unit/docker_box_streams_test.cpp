// The Docker backend's side of the seam, against the fake Docker engine: the attach
// connection's multiplexed frames become run/'s output chunks inside daemon/engine, a launch
// runs Docker's calls in Docker's order, and a kill answered 409 is a box that had ended.
#include "daemon/engine/docker_box_engine.hpp"
#include "tests/support/engine_frames.hpp"
#include "tests/support/fake_engine.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace pybox;
using namespace std::chrono_literals;
using test::attach_stream;
using test::Deliver;
using test::EngineFixture;
using test::frame;
using test::JoinedOutput;
using test::StreamEnd;

namespace {

struct ReadToEnd {
    JoinedOutput output;
    std::optional<Error> broke;  // how the last read failed, when it did
    std::optional<std::string> malformed;
};

ReadToEnd read_to_end(EngineFixture& f, test::Reply attach)
{
    f.engine->on("POST", "/attach", {std::move(attach)});
    auto attached = f.run(f.client->attach("c1", 1s));
    REQUIRE(attached.has_value());
    auto streams = engine::docker_box_streams(std::move(*attached));
    // Bytes the fake leaves unread, so that its reset reaches the reader as one.
    REQUIRE(f.run(streams->write_stdin("print(42)\n", 1s)).has_value());
    ReadToEnd read;
    for (;;) {
        auto chunks = f.run(streams->read_output());
        if (!chunks) {
            read.broke = chunks.error();
            break;
        }
        if (chunks->empty()) break;
        for (const auto& chunk : *chunks) CHECK_FALSE(chunk.bytes.empty());
        test::join_into(read.output, *chunks);
    }
    read.malformed = streams->malformed();
    return read;
}

}  // namespace

TEST_CASE("The Docker backend hands on the attach stream's frames as stdout and stderr chunks")
{
    EngineFixture f;
    const auto read = read_to_end(f, attach_stream(frame(1, "out ") + frame(2, "err") + frame(0, "echo"), Deliver::now));
    CHECK_FALSE(read.broke);
    CHECK_FALSE(read.malformed);
    CHECK(read.output == JoinedOutput{"out echo", "err"});
}

TEST_CASE("A malformed frame header stops the chunks there, and the rest of the stream is drained to its end")
{
    EngineFixture f;
    const auto read =
        read_to_end(f, attach_stream(frame(1, "kept") + frame(7, "lost") + frame(1, "lost too"), Deliver::now));
    CHECK_FALSE(read.broke);
    CHECK(read.output == JoinedOutput{"kept", ""});
    CHECK(read.malformed == "engine stream: frame header names unknown stream 7");
}

TEST_CASE("An attach stream that ends inside a frame is malformed, its bytes so far kept")
{
    EngineFixture f;
    const std::string whole = frame(2, "abcdef");
    const auto read = read_to_end(f, attach_stream(whole.substr(0, whole.size() - 2), Deliver::now));
    CHECK_FALSE(read.broke);
    CHECK(read.output == JoinedOutput{"", "abcd"});
    CHECK(read.malformed == "engine stream: ended inside a frame");
}

TEST_CASE("An attach stream that breaks inside a frame is an error, and malformed too")
{
    EngineFixture f;
    const std::string whole = frame(1, "abcdef");
    const auto read =
        read_to_end(f, attach_stream(whole.substr(0, whole.size() - 2), Deliver::at_exit, StreamEnd::reset)
                           .exits_box_after(20ms));
    REQUIRE(read.broke);
    CHECK(read.output == JoinedOutput{"abcd", ""});
    CHECK(read.malformed == "engine stream: ended inside a frame");
}

TEST_CASE("The Docker backend launches a box by attaching, registering the wait, then starting")
{
    EngineFixture f;
    f.engine->on("POST", "/attach", {attach_stream(frame(1, "42\n"))});
    f.engine->on("POST", "/wait", {test::wait_answer(0)});
    f.engine->on("POST", "/start", {test::respond("204 No Content").exits_box_after(10ms)});
    const auto before = pybox::MonoClock::now();
    auto launched = f.run(f.boxes->launch_box("c1", {1s, 1s}));
    REQUIRE(launched.has_value());
    CHECK(launched->start_asked >= before);
    const auto& heads = f.engine->requests();
    REQUIRE(heads.size() == 3);
    CHECK(heads[0].starts_with("POST /containers/c1/attach?"));
    CHECK(heads[1].starts_with("POST /containers/c1/wait?condition=next-exit"));
    CHECK(heads[2].starts_with("POST /containers/c1/start"));
    CHECK(f.run(launched->end->ended(1s)).has_value());
    JoinedOutput output;
    for (;;) {
        auto chunks = f.run(launched->streams->read_output());
        REQUIRE(chunks.has_value());
        if (chunks->empty()) break;
        test::join_into(output, *chunks);
    }
    CHECK(output == JoinedOutput{"42\n", ""});
}

TEST_CASE("A Docker launch that fails names its step: the streams, the end or the start")
{
    using Step = engine::LaunchFailure::Step;
    const auto failed_step = [](bool attach_ok, bool wait_ok) {
        EngineFixture f;
        f.engine->on("POST", "/attach",
                     {attach_ok ? attach_stream("") : test::respond("500 Internal Server Error", R"({"message":"a"})")});
        f.engine->on("POST", "/wait",
                     {wait_ok ? test::wait_answer(0) : test::respond("500 Internal Server Error", R"({"message":"w"})")});
        f.engine->on("POST", "/start", {test::respond("500 Internal Server Error", R"({"message":"s"})")});
        auto launched = f.run(f.boxes->launch_box("c1", {1s, 1s}));
        REQUIRE_FALSE(launched.has_value());
        CHECK(launched.error().error.code == "engine_error");
        return launched.error().step;
    };
    CHECK(failed_step(false, true) == Step::streams);
    CHECK(failed_step(true, false) == Step::end);
    CHECK(failed_step(true, true) == Step::start);
}

TEST_CASE("A Docker kill answered 409 is a box that had already ended")
{
    EngineFixture f;
    f.engine->on("POST", "/kill", {test::respond("409 Conflict", R"({"message":"is not running"})")});
    const auto killed = f.run(f.boxes->kill_box("c1", 1s));
    REQUIRE(killed.has_value());
    CHECK(*killed == engine::BoxKillOutcome::already_ended);
}
