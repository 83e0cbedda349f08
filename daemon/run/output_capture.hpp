// OutputCapture: what run/ keeps of a box's output, fed the chunks its backend hands on
// (engine/box_output.hpp). Per stream, the first `cap` bytes are kept and the rest counted, so
// memory stays bounded whatever the program prints and the counts stay exact. With
// split_stdout_at(), stdout is cut at the first occurrence of a marker (MarkerSplitter): only
// the bytes before it are the program's stdout, the bytes after it are kept apart (a files
// run's helper report). Pure: no I/O.
#pragma once

#include "daemon/engine/box_output.hpp"
#include "daemon/engine/marker_splitter.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::daemon {

struct StreamCapture {
    std::string kept;               // at most cap bytes, exactly as received
    std::uint64_t total_bytes = 0;  // everything the stream carried
    std::uint64_t dropped_bytes() const { return total_bytes - kept.size(); }
    bool truncated() const { return total_bytes > kept.size(); }
};

class OutputCapture {
public:
    explicit OutputCapture(std::size_t cap_per_stream) : m_cap(cap_per_stream) {}

    void add(const engine::OutputChunk& chunk);
    // At the end of the output: stdout bytes held back as a possible marker start are the program's.
    void finish();
    // Before the first add(): stdout bytes after `marker` go to the split's tail (at most tail_cap).
    void split_stdout_at(std::string marker, std::size_t tail_cap);
    // The split, when one was asked for.
    const std::optional<engine::MarkerSplitter>& stdout_split() const { return m_split; }

    const StreamCapture& stdout_capture() const { return m_stdout; }
    const StreamCapture& stderr_capture() const { return m_stderr; }

private:
    void append(StreamCapture& capture, std::string_view bytes);

    std::size_t m_cap;
    StreamCapture m_stdout;
    StreamCapture m_stderr;
    std::optional<engine::MarkerSplitter> m_split;
};

}  // namespace pybox::daemon
