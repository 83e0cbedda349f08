#include "proto/seccomp_profile.hpp"

#include "common/sha256.hpp"

namespace pybox::proto {

const std::string& seccomp_profile_sha256()
{
    static const std::string digest = sha256_hex(seccomp_profile_json());
    return digest;
}

}  // namespace pybox::proto
