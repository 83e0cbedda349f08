#include "daemon/engine/stream_demuxer.hpp"
#include "tests/support/engine_frames.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using pybox::engine::OutputChunk;
using pybox::engine::StreamDemuxer;
using pybox::proto::OutputStream;
using pybox::test::frame;
using pybox::test::JoinedOutput;

namespace {

// Feeds `stream` in pieces cut at `cuts` and finishes; the chunks joined per stream.
JoinedOutput demux(StreamDemuxer& demuxer, std::string_view stream, const std::vector<std::size_t>& cuts = {})
{
    JoinedOutput joined;
    std::size_t at = 0;
    std::vector<OutputChunk> chunks;
    for (const std::size_t cut : cuts) {
        demuxer.feed(stream.substr(at, cut - at), chunks);
        at = cut;
    }
    demuxer.feed(stream.substr(at), chunks);
    demuxer.finish();
    for (const auto& chunk : chunks) CHECK_FALSE(chunk.bytes.empty());
    pybox::test::join_into(joined, chunks);
    return joined;
}

}  // namespace

TEST_CASE("A single stdout frame is handed on as one stdout chunk")
{
    StreamDemuxer demuxer;
    std::vector<OutputChunk> chunks;
    demuxer.feed(frame(1, "hello\n"), chunks);
    demuxer.finish();
    REQUIRE(chunks.size() == 1);
    CHECK(chunks[0].stream == OutputStream::stdout_stream);
    CHECK(chunks[0].bytes == "hello\n");
    CHECK_FALSE(demuxer.protocol_error());
}

TEST_CASE("Frames split at every byte boundary give the same result")
{
    const std::string stream = frame(1, "out one ") + frame(2, "err") + frame(1, "out two");
    const JoinedOutput expected{"out one out two", "err"};
    for (std::size_t split = 0; split <= stream.size(); ++split) {
        StreamDemuxer demuxer;
        CHECK(demux(demuxer, stream, {split}) == expected);
        CHECK_FALSE(demuxer.protocol_error());
    }
    std::vector<std::size_t> every_byte;
    for (std::size_t at = 1; at < stream.size(); ++at) every_byte.push_back(at);
    StreamDemuxer byte_by_byte;
    CHECK(demux(byte_by_byte, stream, every_byte) == expected);
    CHECK_FALSE(byte_by_byte.protocol_error());
}

TEST_CASE("Interleaved stdout and stderr frames keep their order within each stream")
{
    StreamDemuxer demuxer;
    std::vector<OutputChunk> chunks;
    demuxer.feed(frame(1, "a") + frame(2, "1") + frame(1, "b") + frame(2, "2") + frame(0, "c"), chunks);
    demuxer.finish();
    REQUIRE(chunks.size() == 5);
    CHECK(chunks[1].stream == OutputStream::stderr_stream);
    CHECK(chunks[4].stream == OutputStream::stdout_stream);  // stream 0, stdin's echo, is stdout
    JoinedOutput joined;
    pybox::test::join_into(joined, chunks);
    CHECK(joined == JoinedOutput{"abc", "12"});
}

TEST_CASE("A frame split across reads is handed on piece by piece, never held whole")
{
    const std::string stream = frame(1, "0123456789");
    StreamDemuxer demuxer;
    std::vector<OutputChunk> chunks;
    demuxer.feed(std::string_view(stream).substr(0, 11), chunks);
    REQUIRE(chunks.size() == 1);
    CHECK(chunks[0].bytes == "012");
    demuxer.feed(std::string_view(stream).substr(11), chunks);
    REQUIRE(chunks.size() == 2);
    CHECK(chunks[1].bytes == "3456789");
}

TEST_CASE("Zero-length frames are accepted and carry nothing")
{
    StreamDemuxer demuxer;
    CHECK(demux(demuxer, frame(1, "") + frame(2, "") + frame(1, "x") + frame(1, "")) == JoinedOutput{"x", ""});
    CHECK_FALSE(demuxer.protocol_error());
}

TEST_CASE("An unknown stream byte is a protocol error and later bytes are only counted")
{
    StreamDemuxer demuxer;
    CHECK(demux(demuxer, frame(1, "ok") + frame(3, "bad") + frame(1, "later")) == JoinedOutput{"ok", ""});
    REQUIRE(demuxer.protocol_error());
    CHECK(*demuxer.protocol_error() == "engine stream: frame header names unknown stream 3");
    CHECK(demuxer.unparsed_bytes() == 3 + 8 + 5);
    std::vector<OutputChunk> chunks;
    demuxer.feed("more", chunks);
    CHECK(demuxer.unparsed_bytes() == 3 + 8 + 5 + 4);
    CHECK(chunks.empty());
}

TEST_CASE("Non-zero padding in a frame header is a protocol error")
{
    std::string bad = frame(1, "x");
    bad[2] = 1;
    StreamDemuxer demuxer;
    CHECK(demux(demuxer, bad) == JoinedOutput{});
    REQUIRE(demuxer.protocol_error());
    CHECK(demuxer.unparsed_bytes() == 1);
}

TEST_CASE("A frame cut short at the end of the stream is a protocol error")
{
    const std::string whole = frame(1, "abcdef");
    StreamDemuxer in_payload;
    std::vector<OutputChunk> chunks;
    in_payload.feed(whole.substr(0, whole.size() - 2), chunks);
    CHECK_FALSE(in_payload.protocol_error());
    in_payload.finish();
    CHECK(in_payload.protocol_error() == "engine stream: ended inside a frame");
    REQUIRE(chunks.size() == 1);
    CHECK(chunks[0].bytes == "abcd");

    StreamDemuxer in_header;
    CHECK(demux(in_header, whole.substr(0, 5)) == JoinedOutput{});
    CHECK(in_header.protocol_error());
}
