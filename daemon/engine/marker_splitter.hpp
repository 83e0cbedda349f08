// MarkerSplitter: splits one byte stream at the first occurrence of a marker, with bounded
// memory: the bytes before it are handed back as they come (at most the marker's length minus
// one is held back while it might be the marker's start), the marker is dropped, and the bytes
// after it are kept up to a cap and counted past it (run/output_capture.hpp). Pure, fuzzed
// through the stream demuxer's target.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::engine {

class MarkerSplitter {
public:
    // `marker` must not be empty.
    MarkerSplitter(std::string marker, std::size_t tail_cap);

    // Appends to `before` the bytes now known to come before the marker.
    void feed(std::string_view bytes, std::string& before);
    // End of stream: bytes held back as a possible marker start are appended to `before`.
    void finish(std::string& before);

    bool found() const { return m_found; }
    const std::string& tail() const { return m_tail; }
    bool tail_truncated() const { return m_tail_truncated; }

private:
    std::string m_marker;
    std::vector<std::size_t> m_fallback;  // KMP: longest proper prefix of marker[0..i] that is also its suffix
    std::size_t m_matched = 0;            // marker bytes matched so far (held back)
    bool m_found = false;
    std::size_t m_tail_cap;
    std::string m_tail;
    bool m_tail_truncated = false;
};

}  // namespace pybox::engine
