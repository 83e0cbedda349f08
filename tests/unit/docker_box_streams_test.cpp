// The Docker backend's box streams: the attach connection's multiplexed frames, as the fake
// Docker engine sends them, become run/'s output chunks inside daemon/engine.
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
    auto streams = f.run(f.boxes->attach("c1", 1s));
    REQUIRE(streams.has_value());
    // Bytes the fake leaves unread, so that its reset reaches the reader as one.
    REQUIRE(f.run((*streams)->write_stdin("print(42)\n", 1s)).has_value());
    ReadToEnd read;
    for (;;) {
        auto chunks = f.run((*streams)->read_output());
        if (!chunks) {
            read.broke = chunks.error();
            break;
        }
        if (chunks->empty()) break;
        for (const auto& chunk : *chunks) CHECK_FALSE(chunk.bytes.empty());
        test::join_into(read.output, *chunks);
    }
    read.malformed = (*streams)->malformed();
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
