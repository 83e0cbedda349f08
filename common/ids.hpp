// Random identifiers from the kernel's CSPRNG (OpenSSL RAND_bytes).
#pragma once

#include <string>

namespace pybox {

// 128 random bits as 32 lower-case hex characters.
std::string random_id_128();

}  // namespace pybox
