// Fuzz target: the daemon reads a repair request (POST /v1/repair) from untrusted bytes.
// Invariants: it never crashes, every refusal has a code and a message, and an accepted request
// serializes to a body that parses back to the same request.
#include "proto/repair.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const auto request = pybox::proto::parse_repair_request(body);
    if (!request) {
        if (request.error().code.empty() || request.error().message.empty()) std::abort();
        return 0;
    }
    const auto again = pybox::proto::parse_repair_request(pybox::proto::serialize_repair_request(*request));
    if (!again || again->rounds != request->rounds || again->run != request->run || again->run.request().files.has_value())
        std::abort();
    return 0;
}
