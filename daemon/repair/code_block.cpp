#include "daemon/repair/code_block.hpp"

#include "common/limits.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace pybox::repair {

namespace {

constexpr std::size_t k_shown_info_bytes = 32;

struct Fence {
    char mark = '`';
    std::size_t length = 0;
    std::string_view info;
};

struct Block {
    std::string_view info;
    std::vector<std::string_view> lines;
    bool closed = false;
};

std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return lines;
}

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

// The fence a line opens or closes: at most three spaces, then three or more backticks or tildes.
std::optional<Fence> fence_of(std::string_view line)
{
    std::size_t at = 0;
    while (at < line.size() && at < 4 && line[at] == ' ') ++at;
    if (at > 3 || at == line.size() || (line[at] != '`' && line[at] != '~')) return std::nullopt;
    Fence fence;
    fence.mark = line[at];
    while (at < line.size() && line[at] == fence.mark) {
        ++fence.length;
        ++at;
    }
    if (fence.length < 3) return std::nullopt;
    fence.info = trimmed(line.substr(at));
    // A backtick fence's info string holds no backtick (CommonMark): "```a```" is inline code.
    if (fence.mark == '`' && fence.info.find('`') != std::string_view::npos) return std::nullopt;
    return fence;
}

std::vector<Block> blocks_of(std::string_view answer)
{
    std::vector<Block> blocks;
    std::optional<Fence> open;
    for (const auto line : lines_of(answer)) {
        const auto fence = fence_of(line);
        if (!open) {
            if (fence) {
                open = fence;
                blocks.push_back(Block{fence->info, {}, false});
            }
        } else if (fence && fence->mark == open->mark && fence->length >= open->length && fence->info.empty()) {
            blocks.back().closed = true;
            open.reset();
        } else {
            blocks.back().lines.push_back(line);
        }
    }
    return blocks;
}

bool is_python_info(std::string_view info)
{
    const auto word = info.substr(0, std::min(info.find(' '), info.find('\t')));
    std::string lower(word);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return lower.empty() || lower == "python" || lower == "python3" || lower == "py";
}

std::string normalized(std::string_view program)
{
    std::string text;
    for (const auto line : lines_of(program)) {
        std::string_view kept = line;
        while (!kept.empty() && (kept.back() == ' ' || kept.back() == '\t')) kept.remove_suffix(1);
        text += kept;
        text += '\n';
    }
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
}

}  // namespace

std::variant<std::string, NoProgram> program_from_answer(std::string_view answer)
{
    const auto blocks = blocks_of(answer);
    if (blocks.empty()) return NoProgram{"The answer has no fenced code block."};
    if (blocks.size() > 1)
        return NoProgram{"The answer has " + std::to_string(blocks.size()) + " fenced code blocks; exactly one was asked for."};
    const Block& block = blocks.front();
    if (!block.closed)
        return NoProgram{"The answer's code block is not closed (the answer may have been cut at max_tokens)."};
    if (!is_python_info(block.info))
        return NoProgram{"The answer's code block is marked \"" + util::printable_excerpt(block.info, k_shown_info_bytes) +
                         "\", not Python."};
    std::string program;
    for (const auto line : block.lines) {
        program += line;
        program += '\n';
    }
    if (trimmed(program).find_first_not_of("\n\r\t ") == std::string_view::npos)
        return NoProgram{"The answer's code block is empty."};
    if (program.size() > limits::k_max_source_bytes)
        return NoProgram{"The answer's program has " + std::to_string(program.size()) + " bytes; a program may have at most " +
                         std::to_string(limits::k_max_source_bytes) + "."};
    if (!util::is_valid_utf8(program)) return NoProgram{"The answer's program is not UTF-8 text."};
    if (program.find('\0') != std::string::npos) return NoProgram{"The answer's program holds a NUL byte."};
    return program;
}

bool same_program(std::string_view a, std::string_view b)
{
    return normalized(a) == normalized(b);
}

}  // namespace pybox::repair
