// BoundedLines: a byte stream (pieces as they arrive) split into lines that end in "\n", each
// at most a bound long, for readers of untrusted streams of lines. Holds at most the bound plus
// what one add() brought; a line that grows past the bound makes the splitter overflowed (for
// good: what follows cannot be told apart from that line). Pure; not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::util {

class BoundedLines {
public:
    explicit BoundedLines(std::size_t max_line_bytes) : m_max_line_bytes(max_line_bytes) {}

    // Takes the next bytes of the stream; false once a line is longer than the bound (without
    // its "\n"), which no later call changes.
    bool add(std::string_view bytes);
    // The next whole line, without its "\n"; nullopt while none is complete (or overflowed).
    std::optional<std::string> next();

    bool overflowed() const { return m_overflowed; }
    // Whether bytes of a line not yet ended are held: a stream that ends now ends inside a line.
    bool partial() const { return !m_partial.empty(); }

private:
    std::size_t m_max_line_bytes;
    std::deque<std::string> m_lines;
    std::string m_partial;
    bool m_overflowed = false;
};

}  // namespace pybox::util
