// StreamDemuxer: strict parser of the Docker engine's multiplexed attach stream, internal to
// the Docker backend (docker_box_engine.hpp), which hands run/ the output as chunks.
//
// Each frame is an 8-byte header [stream, 0, 0, 0, size (big-endian uint32)] then `size`
// payload bytes; stream 0 (stdin echo) and 1 are stdout, 2 is stderr. Any other stream byte or
// non-zero padding is a protocol error: parsing stops, the error is kept, and further input is
// only counted. The payload is handed on as it arrives (a frame split across reads gives one
// chunk per piece), so memory stays bounded by what one feed() is given, whatever the frame
// sizes claim. Pure: no I/O, no engine, fuzzed.
#pragma once

#include "daemon/engine/box_output.hpp"
#include "proto/run_events.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::engine {

class StreamDemuxer {
public:
    // Parses the next raw bytes (frames may be split anywhere) and appends their payload to
    // `chunks`, one chunk per frame piece.
    void feed(std::string_view bytes, std::vector<OutputChunk>& chunks);
    // Call at end of stream: a partial frame left over becomes a protocol error.
    void finish();

    // Set once a malformed header (or a truncated frame at finish()) was seen.
    const std::optional<std::string>& protocol_error() const { return m_error; }
    // Raw bytes received after a protocol error (not attributed to either stream).
    std::uint64_t unparsed_bytes() const { return m_unparsed; }

private:
    unsigned char m_header[8] = {};
    std::size_t m_header_have = 0;
    std::uint32_t m_payload_left = 0;
    proto::OutputStream m_current_stream = proto::OutputStream::stdout_stream;
    std::optional<std::string> m_error;
    std::uint64_t m_unparsed = 0;
};

}  // namespace pybox::engine
