#include "daemon/engine/stream_demuxer.hpp"
#include "tests/support/engine_frames.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>

using pybox::engine::StreamDemuxer;
using pybox::test::frame;

TEST_CASE("A single stdout frame is delivered to stdout")
{
    StreamDemuxer demuxer(100);
    demuxer.feed(frame(1, "hello\n"));
    demuxer.finish();
    CHECK(demuxer.stdout_capture().kept == "hello\n");
    CHECK(demuxer.stdout_capture().total_bytes == 6);
    CHECK_FALSE(demuxer.stdout_capture().truncated());
    CHECK(demuxer.stderr_capture().kept.empty());
    CHECK_FALSE(demuxer.protocol_error());
}

TEST_CASE("Frames split at every byte boundary give the same result")
{
    const std::string stream = frame(1, "out one ") + frame(2, "err") + frame(1, "out two");
    for (std::size_t split = 0; split <= stream.size(); ++split) {
        StreamDemuxer demuxer(100);
        demuxer.feed(std::string_view(stream).substr(0, split));
        demuxer.feed(std::string_view(stream).substr(split));
        demuxer.finish();
        CHECK(demuxer.stdout_capture().kept == "out one out two");
        CHECK(demuxer.stderr_capture().kept == "err");
        CHECK_FALSE(demuxer.protocol_error());
    }
    StreamDemuxer byte_by_byte(100);
    for (const char c : stream) {
        byte_by_byte.feed(std::string_view(&c, 1));
    }
    byte_by_byte.finish();
    CHECK(byte_by_byte.stdout_capture().kept == "out one out two");
    CHECK(byte_by_byte.stderr_capture().kept == "err");
    CHECK_FALSE(byte_by_byte.protocol_error());
}

TEST_CASE("Interleaved stdout and stderr frames keep their order within each stream")
{
    StreamDemuxer demuxer(100);
    demuxer.feed(frame(1, "a") + frame(2, "1") + frame(1, "b") + frame(2, "2") + frame(0, "c"));
    demuxer.finish();
    CHECK(demuxer.stdout_capture().kept == "abc");
    CHECK(demuxer.stderr_capture().kept == "12");
}

TEST_CASE("The cap keeps exactly the first bytes of each stream and counts the rest")
{
    StreamDemuxer demuxer(5);
    demuxer.feed(frame(1, "abc") + frame(2, "0123456789") + frame(1, "defgh") + frame(1, "ij"));
    demuxer.finish();
    CHECK(demuxer.stdout_capture().kept == "abcde");
    CHECK(demuxer.stdout_capture().total_bytes == 10);
    CHECK(demuxer.stdout_capture().dropped_bytes() == 5);
    CHECK(demuxer.stdout_capture().truncated());
    CHECK(demuxer.stderr_capture().kept == "01234");
    CHECK(demuxer.stderr_capture().total_bytes == 10);
    CHECK_FALSE(demuxer.protocol_error());
}

TEST_CASE("Output of exactly the cap is not truncated")
{
    StreamDemuxer demuxer(4);
    demuxer.feed(frame(1, "abcd"));
    demuxer.finish();
    CHECK(demuxer.stdout_capture().kept == "abcd");
    CHECK_FALSE(demuxer.stdout_capture().truncated());
}

TEST_CASE("Zero-length frames are accepted and carry nothing")
{
    StreamDemuxer demuxer(10);
    demuxer.feed(frame(1, "") + frame(2, "") + frame(1, "x") + frame(1, ""));
    demuxer.finish();
    CHECK(demuxer.stdout_capture().kept == "x");
    CHECK(demuxer.stderr_capture().total_bytes == 0);
    CHECK_FALSE(demuxer.protocol_error());
}

TEST_CASE("An unknown stream byte is a protocol error and later bytes are only counted")
{
    StreamDemuxer demuxer(100);
    demuxer.feed(frame(1, "ok") + frame(3, "bad") + frame(1, "later"));
    demuxer.finish();
    REQUIRE(demuxer.protocol_error());
    CHECK(demuxer.stdout_capture().kept == "ok");
    CHECK(demuxer.unparsed_bytes() == 3 + 8 + 5);
    demuxer.feed("more");
    CHECK(demuxer.unparsed_bytes() == 3 + 8 + 5 + 4);
    CHECK(demuxer.stdout_capture().kept == "ok");
}

TEST_CASE("Non-zero padding in a frame header is a protocol error")
{
    std::string bad = frame(1, "x");
    bad[2] = 1;
    StreamDemuxer demuxer(100);
    demuxer.feed(bad);
    REQUIRE(demuxer.protocol_error());
    CHECK(demuxer.stdout_capture().total_bytes == 0);
    CHECK(demuxer.unparsed_bytes() == 1);
}

TEST_CASE("A frame cut short at the end of the stream is a protocol error")
{
    const std::string whole = frame(1, "abcdef");
    StreamDemuxer in_payload(100);
    in_payload.feed(whole.substr(0, whole.size() - 2));
    CHECK_FALSE(in_payload.protocol_error());
    in_payload.finish();
    CHECK(in_payload.protocol_error());
    CHECK(in_payload.stdout_capture().kept == "abcd");

    StreamDemuxer in_header(100);
    in_header.feed(whole.substr(0, 5));
    in_header.finish();
    CHECK(in_header.protocol_error());
}

TEST_CASE("A 10 MB payload fed in 4 KiB chunks keeps memory bounded by the cap")
{
    constexpr std::size_t cap = 65'536;
    constexpr std::size_t payload = 10 * 1024 * 1024;
    const std::string stream = frame(1, std::string(payload, 'x'));
    StreamDemuxer demuxer(cap);
    for (std::size_t at = 0; at < stream.size(); at += 4096) {
        demuxer.feed(std::string_view(stream).substr(at, 4096));
    }
    demuxer.finish();
    CHECK_FALSE(demuxer.protocol_error());
    CHECK(demuxer.stdout_capture().kept.size() == cap);
    CHECK(demuxer.stdout_capture().kept.capacity() <= 2 * cap);
    CHECK(demuxer.stdout_capture().total_bytes == payload);
    CHECK(demuxer.stdout_capture().dropped_bytes() == payload - cap);
}
