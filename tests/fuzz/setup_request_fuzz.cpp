// Fuzzes the strict parser of `POST /v1/setup` bodies (untrusted bytes from the socket).
#include "proto/setup_request.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const auto request = pybox::proto::parse_setup_request(body);
    if (request && request->images.empty()) std::abort();  // an accepted body always names an image
    return 0;
}
