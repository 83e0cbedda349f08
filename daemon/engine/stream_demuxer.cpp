#include "daemon/engine/stream_demuxer.hpp"

#include <algorithm>
#include <utility>

namespace pybox::engine {

namespace {

constexpr std::size_t k_header_size = 8;

}  // namespace

StreamDemuxer::StreamDemuxer(std::size_t cap_per_stream) : m_cap(cap_per_stream) {}

void StreamDemuxer::feed(std::string_view bytes)
{
    while (!bytes.empty()) {
        if (m_error) {
            m_unparsed += bytes.size();
            return;
        }
        if (m_payload_left > 0) {
            const std::size_t take = std::min<std::size_t>(m_payload_left, bytes.size());
            if (m_current_stream == 2) {
                append(m_stderr, bytes.substr(0, take));
            } else {
                append_stdout(bytes.substr(0, take));
            }
            m_payload_left -= static_cast<std::uint32_t>(take);
            bytes.remove_prefix(take);
            continue;
        }
        const std::size_t take = std::min(k_header_size - m_header_have, bytes.size());
        std::copy_n(bytes.begin(), take, m_header + m_header_have);
        m_header_have += take;
        bytes.remove_prefix(take);
        if (m_header_have < k_header_size) {
            continue;
        }
        m_header_have = 0;
        const unsigned stream = m_header[0];
        if (stream > 2) {
            m_error = "engine stream: frame header names unknown stream " + std::to_string(stream);
        } else if (m_header[1] != 0 || m_header[2] != 0 || m_header[3] != 0) {
            m_error = "engine stream: frame header has non-zero padding";
        } else {
            m_current_stream = static_cast<int>(stream);
            m_payload_left = (std::uint32_t{m_header[4]} << 24) | (std::uint32_t{m_header[5]} << 16) |
                             (std::uint32_t{m_header[6]} << 8) | std::uint32_t{m_header[7]};
        }
    }
}

void StreamDemuxer::finish()
{
    if (!m_error && (m_header_have > 0 || m_payload_left > 0)) {
        m_error = "engine stream: ended inside a frame";
    }
    if (m_split) {
        std::string before;
        m_split->finish(before);
        append(m_stdout, before);
    }
}

void StreamDemuxer::split_stdout_at(std::string marker, std::size_t tail_cap)
{
    m_split.emplace(std::move(marker), tail_cap);
}

void StreamDemuxer::append_stdout(std::string_view bytes)
{
    if (!m_split) {
        append(m_stdout, bytes);
        return;
    }
    std::string before;
    m_split->feed(bytes, before);
    append(m_stdout, before);
}

void StreamDemuxer::append(StreamCapture& capture, std::string_view bytes)
{
    capture.total_bytes += bytes.size();
    if (capture.kept.size() < m_cap) {
        capture.kept.append(bytes.substr(0, m_cap - capture.kept.size()));
    }
}

}  // namespace pybox::engine
