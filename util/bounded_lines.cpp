#include "util/bounded_lines.hpp"

#include <utility>

namespace pybox::util {

bool BoundedLines::add(std::string_view bytes)
{
    while (!m_overflowed && !bytes.empty()) {
        const auto end = bytes.find('\n');
        const auto piece = bytes.substr(0, end);
        if (m_partial.size() + piece.size() > m_max_line_bytes) {
            m_overflowed = true;
            m_lines.clear();
            m_partial.clear();
            break;
        }
        m_partial += piece;
        if (end == std::string_view::npos) break;
        m_lines.push_back(std::exchange(m_partial, {}));
        bytes.remove_prefix(end + 1);
    }
    return !m_overflowed;
}

std::optional<std::string> BoundedLines::next()
{
    if (m_lines.empty()) return std::nullopt;
    auto line = std::move(m_lines.front());
    m_lines.pop_front();
    return line;
}

}  // namespace pybox::util
