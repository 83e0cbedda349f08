// Reading the project's own files (docs, sources) in unit tests that compare docs with code,
// and the lines of a text.
// tests/support/build_paths.hpp says where the source tree is.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pybox::test {

// The lines of `text`, each without its "\n".
inline std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The whole text of a file; fails the test when it cannot be read.
inline std::string read_text(const std::filesystem::path& file)
{
    std::ifstream in(file);
    REQUIRE(in.good());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The row of a Markdown table in `text` whose first cell is `first` ("| first | ..."); fails the
// test when there is none.
inline std::string table_row(const std::string& text, const std::string& first)
{
    const auto at = text.find("\n| " + first + " |");
    REQUIRE(at != std::string::npos);
    return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

// `text` with the first `from` replaced by `to`; fails the test when `text` has no `from`.
inline std::string replaced(std::string text, const std::string& from, const std::string& to)
{
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

}  // namespace pybox::test
