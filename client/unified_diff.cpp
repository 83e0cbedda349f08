#include "client/unified_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pybox::client {

namespace {

constexpr std::size_t k_context = 3;

enum class Op { keep, remove, add };

struct Edit {
    Op op;
    std::size_t old_line;  // index into the old lines (keep, remove)
    std::size_t new_line;  // index into the new lines (keep, add)
};

// Each line with its "\n", the last one without when the text does not end in one.
std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto end = text.find('\n');
        const auto length = end == std::string_view::npos ? text.size() : end + 1;
        lines.push_back(text.substr(0, length));
        text.remove_prefix(length);
    }
    return lines;
}

std::vector<Edit> edits_of(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b)
{
    std::vector<Edit> edits;
    const std::size_t n = a.size(), m = b.size();
    if (n != 0 && m != 0 && n * m > k_max_diff_cells) {
        for (std::size_t i = 0; i < n; ++i) edits.push_back({Op::remove, i, 0});
        for (std::size_t j = 0; j < m; ++j) edits.push_back({Op::add, n, j});
        return edits;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    std::vector<std::vector<std::uint32_t>> lcs(n + 1, std::vector<std::uint32_t>(m + 1, 0));
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            edits.push_back({Op::keep, i++, j++});
        } else if (j == m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) {
            edits.push_back({Op::remove, i++, j});
        } else {
            edits.push_back({Op::add, i, j++});
        }
    }
    return edits;
}

std::string range(std::size_t first, std::size_t count)
{
    // GNU diff: "l,s", just "l" for one line, and for none the line before it.
    if (count == 1) return std::to_string(first + 1);
    return std::to_string(count == 0 ? first : first + 1) + "," + std::to_string(count);
}

void append_line(std::string& out, char prefix, std::string_view line)
{
    out += prefix;
    out += line;
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string unified_diff(std::string_view old_text, std::string_view new_text, std::string_view old_name,
                         std::string_view new_name)
{
    const auto a = lines_of(old_text);
    const auto b = lines_of(new_text);
    const auto edits = edits_of(a, b);
    std::string out;
    std::size_t at = 0;
    while (at < edits.size()) {
        while (at < edits.size() && edits[at].op == Op::keep) ++at;
        if (at == edits.size()) break;
        // A hunk: from k_context keeps before this change to k_context keeps after the last change
        // that is followed by fewer than 2 * k_context + 1 keeps.
        const std::size_t begin = at >= k_context ? at - k_context : 0;
        std::size_t end = at;
        for (;;) {
            while (end < edits.size() && edits[end].op != Op::keep) ++end;
            std::size_t keeps = 0;
            while (end + keeps < edits.size() && edits[end + keeps].op == Op::keep) ++keeps;
            if (end + keeps == edits.size() || keeps > 2 * k_context) {
                end += std::min(keeps, k_context);
                break;
            }
            end += keeps;
        }
        std::size_t old_count = 0, new_count = 0;
        for (std::size_t k = begin; k < end; ++k) {
            if (edits[k].op != Op::add) ++old_count;
            if (edits[k].op != Op::remove) ++new_count;
        }
        if (out.empty()) out = "--- " + std::string(old_name) + "\n+++ " + std::string(new_name) + "\n";
        out += "@@ -" + range(edits[begin].old_line, old_count) + " +" + range(edits[begin].new_line, new_count) + " @@\n";
        for (std::size_t k = begin; k < end; ++k) {
            const Edit& edit = edits[k];
            if (edit.op == Op::keep) append_line(out, ' ', a[edit.old_line]);
            if (edit.op == Op::remove) append_line(out, '-', a[edit.old_line]);
            if (edit.op == Op::add) append_line(out, '+', b[edit.new_line]);
        }
        at = end;
    }
    return out;
}

}  // namespace pybox::client
