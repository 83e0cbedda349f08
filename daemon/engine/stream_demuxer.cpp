#include "daemon/engine/stream_demuxer.hpp"

#include <algorithm>

namespace pybox::engine {

namespace {

constexpr std::size_t k_header_size = 8;

}  // namespace

void StreamDemuxer::feed(std::string_view bytes, std::vector<OutputChunk>& chunks)
{
    while (!bytes.empty()) {
        if (m_error) {
            m_unparsed += bytes.size();
            return;
        }
        if (m_payload_left > 0) {
            const std::size_t take = std::min<std::size_t>(m_payload_left, bytes.size());
            chunks.push_back(OutputChunk{m_current_stream, std::string(bytes.substr(0, take))});
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
            m_current_stream = stream == 2 ? proto::OutputStream::stderr_stream : proto::OutputStream::stdout_stream;
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
}

}  // namespace pybox::engine
