// The invariant shared by the fuzz targets of PyBox's own document readers (proto/): what
// strict mode accepts, tolerant mode accepts as the same value, and that value written back
// with `write` reads back strictly the same. Aborts otherwise; returns the tolerant reading.
#pragma once

#include "util/read_mode.hpp"

#include <boost/json/value.hpp>

#include <cstdlib>

namespace pybox::fuzz {

template <class Read, class Write>
auto check_read_modes(const boost::json::value& document, Read read, Write write)
{
    const auto strict = read(document, util::ReadMode::strict);
    auto tolerant = read(document, util::ReadMode::tolerant);
    if (strict) {
        if (!tolerant || !(*tolerant == *strict)) {
            std::abort();
        }
        const auto again = read(write(*strict), util::ReadMode::strict);
        if (!again || !(*again == *strict)) {
            std::abort();
        }
    }
    return tolerant;
}

}  // namespace pybox::fuzz
