#include "daemon/engine/stream_demuxer.hpp"
#include "daemon/run/output_capture.hpp"
#include "tests/support/engine_frames.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

using pybox::daemon::OutputCapture;
using pybox::engine::OutputChunk;
using pybox::proto::OutputStream;

namespace {

OutputChunk out(std::string bytes) { return {OutputStream::stdout_stream, std::move(bytes)}; }
OutputChunk err(std::string bytes) { return {OutputStream::stderr_stream, std::move(bytes)}; }

}  // namespace

TEST_CASE("The cap keeps exactly the first bytes of each stream and counts the rest")
{
    OutputCapture capture(5);
    for (const auto& chunk : {out("abc"), err("0123456789"), out("defgh"), out("ij")}) capture.add(chunk);
    capture.finish();
    CHECK(capture.stdout_capture().kept == "abcde");
    CHECK(capture.stdout_capture().total_bytes == 10);
    CHECK(capture.stdout_capture().dropped_bytes() == 5);
    CHECK(capture.stdout_capture().truncated());
    CHECK(capture.stderr_capture().kept == "01234");
    CHECK(capture.stderr_capture().total_bytes == 10);
}

TEST_CASE("Output of exactly the cap is not truncated")
{
    OutputCapture capture(4);
    capture.add(out("abcd"));
    capture.finish();
    CHECK(capture.stdout_capture().kept == "abcd");
    CHECK_FALSE(capture.stdout_capture().truncated());
    CHECK(capture.stderr_capture().total_bytes == 0);
}

TEST_CASE("A 10 MB payload fed in 4 KiB chunks keeps memory bounded by the cap")
{
    constexpr std::size_t cap = 65'536;
    constexpr std::size_t payload = 10 * 1024 * 1024;
    const std::string stream = pybox::test::frame(1, std::string(payload, 'x'));
    pybox::engine::StreamDemuxer demuxer;
    OutputCapture capture(cap);
    for (std::size_t at = 0; at < stream.size(); at += 4096) {
        std::vector<OutputChunk> chunks;
        demuxer.feed(std::string_view(stream).substr(at, 4096), chunks);
        for (const auto& chunk : chunks) capture.add(chunk);
    }
    demuxer.finish();
    capture.finish();
    CHECK_FALSE(demuxer.protocol_error());
    CHECK(capture.stdout_capture().kept.size() == cap);
    CHECK(capture.stdout_capture().kept.capacity() <= 2 * cap);
    CHECK(capture.stdout_capture().total_bytes == payload);
    CHECK(capture.stdout_capture().dropped_bytes() == payload - cap);
}

TEST_CASE("A files run's capture keeps only the program's bytes as stdout", "[files]")
{
    OutputCapture capture(65536);
    capture.split_stdout_at("<M>", 100);
    capture.add(out("hel"));
    capture.add(err("<M>"));
    capture.add(out("lo<"));
    capture.add(out("M>{}"));
    capture.finish();
    CHECK(capture.stdout_capture().kept == "hello");
    CHECK(capture.stdout_capture().total_bytes == 5);
    CHECK(capture.stderr_capture().kept == "<M>");
    CHECK(capture.stdout_split()->tail() == "{}");
}
