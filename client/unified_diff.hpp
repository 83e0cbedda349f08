// A unified diff of two texts, as `diff -u` prints it: "--- OLD" and "+++ NEW" headers, then hunks
// of changed lines with three lines of context, "@@ -l,s +l,s @@" headers (GNU's conventions for
// counts of 0 and 1), and "\ No newline at end of file" after a last line without one. "" when
// the texts are equal.
//
// The lines are matched by a longest common subsequence; when the two texts together have more
// than k_max_diff_cells line pairs to compare, the diff replaces every line instead (correct, only
// not minimal), so the cost is bounded for any input. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pybox::client {

inline constexpr std::size_t k_max_diff_cells = 4'000'000;

std::string unified_diff(std::string_view old_text, std::string_view new_text, std::string_view old_name,
                         std::string_view new_name);

}  // namespace pybox::client
