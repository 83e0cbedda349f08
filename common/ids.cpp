#include "common/ids.hpp"

#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace pybox {

std::string random_id_128()
{
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        throw std::runtime_error("the system random number generator failed");
    static constexpr char k_hex[] = "0123456789abcdef";
    std::string id;
    id.reserve(32);
    for (unsigned char b : bytes) {
        id.push_back(k_hex[b >> 4]);
        id.push_back(k_hex[b & 0x0f]);
    }
    return id;
}

}  // namespace pybox
