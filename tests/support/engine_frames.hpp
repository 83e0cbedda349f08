// Builds frames of the Docker engine's multiplexed attach stream for tests and fuzz targets,
// and joins the output chunks a backend hands on back into each stream's text.
#pragma once

#include "daemon/engine/box_output.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// Each stream's bytes, in order, from chunks.
struct JoinedOutput {
    std::string out;
    std::string err;
    bool operator==(const JoinedOutput&) const = default;
};

inline void join_into(JoinedOutput& joined, const std::vector<engine::OutputChunk>& chunks)
{
    for (const auto& chunk : chunks)
        (chunk.stream == proto::OutputStream::stderr_stream ? joined.err : joined.out) += chunk.bytes;
}

}  // namespace pybox::test
