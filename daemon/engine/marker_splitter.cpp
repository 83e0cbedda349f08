#include "daemon/engine/marker_splitter.hpp"

#include <cstring>
#include <utility>

namespace pybox::engine {

MarkerSplitter::MarkerSplitter(std::string marker, std::size_t tail_cap)
    : m_marker(std::move(marker)), m_fallback(m_marker.size(), 0), m_tail_cap(tail_cap)
{
    for (std::size_t i = 1, k = 0; i < m_marker.size(); ++i) {
        while (k > 0 && m_marker[i] != m_marker[k]) k = m_fallback[k - 1];
        if (m_marker[i] == m_marker[k]) ++k;
        m_fallback[i] = k;
    }
}

void MarkerSplitter::feed(std::string_view bytes, std::string& before)
{
    std::size_t at = 0;
    while (!m_found && at < bytes.size()) {
        if (m_matched == 0) {  // fast path: skip to the next byte that could start the marker
            const void* start = std::memchr(bytes.data() + at, m_marker[0], bytes.size() - at);
            const std::size_t next = start == nullptr ? bytes.size()
                                                      : static_cast<std::size_t>(static_cast<const char*>(start) - bytes.data());
            before.append(bytes.substr(at, next - at));
            at = next;
            if (at == bytes.size()) break;
        }
        const char c = bytes[at];
        while (m_matched > 0 && m_marker[m_matched] != c) {
            const std::size_t keep = m_fallback[m_matched - 1];
            before.append(m_marker, 0, m_matched - keep);  // held back, but not the marker after all
            m_matched = keep;
        }
        if (m_marker[m_matched] == c) {
            ++m_matched;
        } else {
            before.push_back(c);
        }
        ++at;
        if (m_matched == m_marker.size()) m_found = true;
    }
    if (m_found && at < bytes.size()) {
        const std::string_view rest = bytes.substr(at);
        const std::size_t room = m_tail_cap - m_tail.size();
        m_tail.append(rest.substr(0, room));
        if (rest.size() > room) m_tail_truncated = true;
    }
}

void MarkerSplitter::finish(std::string& before)
{
    if (!m_found) {
        before.append(m_marker, 0, m_matched);
        m_matched = 0;
    }
}

}  // namespace pybox::engine
