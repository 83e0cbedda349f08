// SHA-256 through OpenSSL's EVP interface.
#pragma once

#include "common/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace pybox {

// Lower-case hex digest of the bytes.
std::string sha256_hex(std::string_view bytes);
// Lower-case hex digest of a file's contents, read in bounded chunks.
Expected<std::string> sha256_file_hex(const std::filesystem::path& file);

// Incremental hashing for streams.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(std::string_view bytes);
    std::string finish_hex();

private:
    void* m_ctx;  // EVP_MD_CTX, kept opaque so OpenSSL headers stay out of this header
};

}  // namespace pybox
