#include "daemon/run/output_capture.hpp"

#include <utility>

namespace pybox::daemon {

void OutputCapture::add(const engine::OutputChunk& chunk)
{
    if (chunk.stream == proto::OutputStream::stderr_stream) {
        append(m_stderr, chunk.bytes);
    } else if (!m_split) {
        append(m_stdout, chunk.bytes);
    } else {
        std::string before;
        m_split->feed(chunk.bytes, before);
        append(m_stdout, before);
    }
}

void OutputCapture::finish()
{
    if (!m_split) return;
    std::string before;
    m_split->finish(before);
    append(m_stdout, before);
}

void OutputCapture::split_stdout_at(std::string marker, std::size_t tail_cap)
{
    m_split.emplace(std::move(marker), tail_cap);
}

void OutputCapture::append(StreamCapture& capture, std::string_view bytes)
{
    capture.total_bytes += bytes.size();
    if (capture.kept.size() < m_cap) {
        capture.kept.append(bytes.substr(0, m_cap - capture.kept.size()));
    }
}

}  // namespace pybox::daemon
