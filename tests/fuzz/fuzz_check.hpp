// What every fuzz target asserts with: a promise of the code under test that does not hold
// aborts, so libFuzzer (and the replay of the corpus) reports the input.
#pragma once

#include <cstdlib>

namespace pybox::fuzz {

inline void check(bool condition)
{
    if (!condition) std::abort();
}

}  // namespace pybox::fuzz
