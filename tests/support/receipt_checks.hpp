// What run tests ask of a receipt: whether it carries an explanation code, and how one of its
// phases ended.
#pragma once

#include "proto/receipt.hpp"

#include <algorithm>
#include <string>
#include <string_view>

namespace pybox::test {

inline bool has_code(const proto::Receipt& receipt, std::string_view code)
{
    return std::any_of(receipt.explanations.begin(), receipt.explanations.end(),
                       [&](const proto::Explanation& explanation) { return explanation.code == code; });
}

// The outcome of the phase `name`, or "absent" when the run had no such phase.
inline std::string phase_outcome(const proto::Receipt& receipt, std::string_view name)
{
    for (const auto& phase : receipt.lifecycle.phases)
        if (phase.name == name) return phase.outcome;
    return "absent";
}

}  // namespace pybox::test
