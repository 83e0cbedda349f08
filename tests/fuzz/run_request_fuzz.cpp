// Fuzz target: the daemon's request parser reads untrusted bytes from the socket.
// Invariants: it never crashes, and an accepted request serializes to a body that parses
// back to the same request (and the same policy).
#include "proto/run_request.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const auto request = pybox::proto::parse_run_request(body);
    if (!request) {
        if (request.error().code.empty() || request.error().message.empty()) {
            std::abort();
        }
        return 0;
    }
    const auto again = pybox::proto::parse_run_request(pybox::proto::serialize_run_request(request->request()));
    if (!again || *again != *request) {
        std::abort();
    }
    return 0;
}
