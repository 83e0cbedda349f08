// Fuzzes the Docker backend's StreamDemuxer, with run/'s OutputCapture behind it as in a run, two
// ways: the raw input as an engine stream (must never crash, must keep the capture within its
// cap, and must not depend on how the input is split), and a well-formed stream built from the
// input (must be demultiplexed exactly). Every other input also splits stdout at a marker, so
// the MarkerSplitter behind the capture is fuzzed too.
#include "daemon/engine/stream_demuxer.hpp"
#include "daemon/run/output_capture.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/support/engine_frames.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using pybox::daemon::OutputCapture;
using pybox::daemon::StreamCapture;
using pybox::engine::OutputChunk;
using pybox::engine::StreamDemuxer;
using pybox::test::frame;

using pybox::fuzz::check;

void check_bounded(const StreamCapture& capture, std::size_t cap)
{
    check(capture.kept.size() <= cap);
    check(capture.total_bytes >= capture.kept.size());
}

struct Demuxed {
    StreamDemuxer demuxer;
    OutputCapture capture;
};

// Feeds `input` in pieces of `chunk` bytes through a demuxer into a capture of `cap` per stream.
void demux(Demuxed& into, std::string_view input, std::size_t chunk)
{
    for (std::size_t at = 0; at < input.size(); at += chunk) {
        std::vector<OutputChunk> chunks;
        into.demuxer.feed(input.substr(at, chunk), chunks);
        for (const auto& piece : chunks) {
            check(!piece.bytes.empty());
            into.capture.add(piece);
        }
    }
    into.demuxer.finish();
    into.capture.finish();
}

bool same(const Demuxed& a, const Demuxed& b)
{
    const auto& x = a.capture;
    const auto& y = b.capture;
    return x.stdout_capture().kept == y.stdout_capture().kept &&
           x.stdout_capture().total_bytes == y.stdout_capture().total_bytes &&
           x.stderr_capture().kept == y.stderr_capture().kept &&
           x.stderr_capture().total_bytes == y.stderr_capture().total_bytes &&
           x.stdout_split().has_value() == y.stdout_split().has_value() &&
           (!x.stdout_split() || (x.stdout_split()->found() == y.stdout_split()->found() &&
                                  x.stdout_split()->tail() == y.stdout_split()->tail())) &&
           a.demuxer.protocol_error() == b.demuxer.protocol_error() &&
           a.demuxer.unparsed_bytes() == b.demuxer.unparsed_bytes();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2) {
        return 0;
    }
    const std::size_t cap = data[0];
    const std::size_t chunk = std::size_t{data[1]} + 1;
    const bool split_at_marker = (data[1] & 1) != 0;
    const std::string_view input(reinterpret_cast<const char*>(data + 2), size - 2);

    Demuxed whole{{}, OutputCapture(cap)};
    Demuxed split{{}, OutputCapture(cap)};
    if (split_at_marker) {
        whole.capture.split_stdout_at("<M>", cap);
        split.capture.split_stdout_at("<M>", cap);
    }
    demux(whole, input, input.size() + 1);
    demux(split, input, chunk);
    check_bounded(whole.capture.stdout_capture(), cap);
    check_bounded(whole.capture.stderr_capture(), cap);
    check(same(whole, split));

    // Well-formed: each input byte b starts a frame on stream b % 3 with b / 3 % 16 payload bytes.
    std::string stream;
    std::string expected_out;
    std::string expected_err;
    for (std::size_t at = 0; at < input.size();) {
        const auto b = static_cast<unsigned char>(input[at++]);
        const std::string_view payload = input.substr(at, b / 3 % 16);
        at += payload.size();
        stream += frame(static_cast<unsigned char>(b % 3), payload);
        (b % 3 == 2 ? expected_err : expected_out) += payload;
    }
    Demuxed valid{{}, OutputCapture(cap)};
    demux(valid, stream, chunk);
    check(!valid.demuxer.protocol_error());
    check(valid.capture.stdout_capture().total_bytes == expected_out.size());
    check(valid.capture.stderr_capture().total_bytes == expected_err.size());
    check(valid.capture.stdout_capture().kept == expected_out.substr(0, cap));
    check(valid.capture.stderr_capture().kept == expected_err.substr(0, cap));
    return 0;
}
