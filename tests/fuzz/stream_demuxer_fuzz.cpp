// Fuzzes StreamDemuxer two ways: the raw input as an engine stream (must never crash or exceed
// its cap, and must not depend on how the input is split), and a well-formed stream built from
// the input (must be demultiplexed exactly).
#include "daemon/engine/stream_demuxer.hpp"
#include "tests/support/engine_frames.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using pybox::engine::StreamCapture;
using pybox::engine::StreamDemuxer;
using pybox::test::frame;

void check(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

void check_bounded(const StreamCapture& capture, std::size_t cap)
{
    check(capture.kept.size() <= cap);
    check(capture.total_bytes >= capture.kept.size());
}

bool same(const StreamDemuxer& a, const StreamDemuxer& b)
{
    return a.stdout_capture().kept == b.stdout_capture().kept &&
           a.stdout_capture().total_bytes == b.stdout_capture().total_bytes &&
           a.stderr_capture().kept == b.stderr_capture().kept &&
           a.stderr_capture().total_bytes == b.stderr_capture().total_bytes &&
           a.protocol_error() == b.protocol_error() && a.unparsed_bytes() == b.unparsed_bytes();
}


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2) {
        return 0;
    }
    const std::size_t cap = data[0];
    const std::size_t chunk = std::size_t{data[1]} + 1;
    const std::string_view input(reinterpret_cast<const char*>(data + 2), size - 2);

    StreamDemuxer whole(cap);
    whole.feed(input);
    whole.finish();
    StreamDemuxer split(cap);
    for (std::size_t at = 0; at < input.size(); at += chunk) {
        split.feed(input.substr(at, chunk));
    }
    split.finish();
    check_bounded(whole.stdout_capture(), cap);
    check_bounded(whole.stderr_capture(), cap);
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
    StreamDemuxer valid(cap);
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
        valid.feed(std::string_view(stream).substr(at, chunk));
    }
    valid.finish();
    check(!valid.protocol_error());
    check(valid.stdout_capture().total_bytes == expected_out.size());
    check(valid.stderr_capture().total_bytes == expected_err.size());
    check(valid.stdout_capture().kept == expected_out.substr(0, cap));
    check(valid.stderr_capture().kept == expected_err.substr(0, cap));
    return 0;
}
