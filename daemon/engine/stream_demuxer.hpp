// StreamDemuxer: strict, bounded parser of the engine's multiplexed attach stream.
//
// Each frame is an 8-byte header [stream, 0, 0, 0, size (big-endian uint32)] then `size`
// payload bytes; stream 0 (stdin echo) and 1 go to stdout, 2 to stderr. Any other stream byte
// or non-zero padding is a protocol error: parsing stops, the error is kept, and further
// input is only counted. Per stream, the first `cap` bytes are kept and the rest counted, so
// memory stays bounded whatever the program prints. With split_stdout_at(), stdout is cut at
// the first occurrence of a marker (MarkerSplitter): only the bytes before it are the program's
// stdout, the bytes after it are kept apart (a files run's helper report). Pure: no I/O, no
// engine, fuzzed.
#pragma once

#include "daemon/engine/marker_splitter.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::engine {

struct StreamCapture {
    std::string kept;             // at most cap bytes, exactly as received
    std::uint64_t total_bytes = 0;  // everything the stream carried
    std::uint64_t dropped_bytes() const { return total_bytes - kept.size(); }
    bool truncated() const { return total_bytes > kept.size(); }
};

class StreamDemuxer {
public:
    explicit StreamDemuxer(std::size_t cap_per_stream);

    // Feeds the next raw bytes; frames may be split anywhere.
    void feed(std::string_view bytes);
    // Call at end of stream: a partial frame left over becomes a protocol error.
    void finish();
    // Before the first feed(): stdout bytes after `marker` go to the split's tail (at most tail_cap).
    void split_stdout_at(std::string marker, std::size_t tail_cap);
    // The split, when one was asked for.
    const std::optional<MarkerSplitter>& stdout_split() const { return m_split; }

    const StreamCapture& stdout_capture() const { return m_stdout; }
    const StreamCapture& stderr_capture() const { return m_stderr; }
    // Set once a malformed header (or a truncated frame at finish()) was seen.
    const std::optional<std::string>& protocol_error() const { return m_error; }
    // Raw bytes received after a protocol error (not attributed to either stream).
    std::uint64_t unparsed_bytes() const { return m_unparsed; }

private:
    void append(StreamCapture& capture, std::string_view bytes);
    void append_stdout(std::string_view bytes);

    std::size_t m_cap;
    StreamCapture m_stdout;
    StreamCapture m_stderr;
    unsigned char m_header[8] = {};
    std::size_t m_header_have = 0;
    std::uint32_t m_payload_left = 0;
    int m_current_stream = 0;
    std::optional<std::string> m_error;
    std::uint64_t m_unparsed = 0;
    std::optional<MarkerSplitter> m_split;
};

}  // namespace pybox::engine
