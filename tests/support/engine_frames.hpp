// Builds frames of the engine's multiplexed attach stream for tests and fuzz targets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pybox::test {

// One frame: [stream, 0, 0, 0, big-endian uint32 size] then the payload.
inline std::string frame(unsigned char stream, std::string_view payload)
{
    const auto size = static_cast<std::uint32_t>(payload.size());
    std::string out{static_cast<char>(stream), '\0', '\0', '\0', static_cast<char>(size >> 24),
                    static_cast<char>(size >> 16), static_cast<char>(size >> 8), static_cast<char>(size)};
    out += payload;
    return out;
}

}  // namespace pybox::test
