#include "common/sha256.hpp"

#include "common/api_error_codes.hpp"

#include <openssl/evp.h>

#include <array>
#include <fstream>
#include <stdexcept>

namespace pybox {

namespace {

EVP_MD_CTX* context(void* raw) { return static_cast<EVP_MD_CTX*>(raw); }

}  // namespace

Sha256::Sha256() : m_ctx(EVP_MD_CTX_new())
{
    if (m_ctx == nullptr || EVP_DigestInit_ex(context(m_ctx), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL could not start a SHA-256 digest");
}

Sha256::~Sha256() { EVP_MD_CTX_free(context(m_ctx)); }

void Sha256::update(std::string_view bytes)
{
    if (EVP_DigestUpdate(context(m_ctx), bytes.data(), bytes.size()) != 1)
        throw std::runtime_error("OpenSSL SHA-256 update failed");
}

std::string Sha256::finish_hex()
{
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context(m_ctx), digest.data(), &length) != 1)
        throw std::runtime_error("OpenSSL SHA-256 final failed");
    static constexpr char k_hex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        hex.push_back(k_hex[digest[i] >> 4]);
        hex.push_back(k_hex[digest[i] & 0x0f]);
    }
    return hex;
}

std::string sha256_hex(std::string_view bytes)
{
    Sha256 hash;
    hash.update(bytes);
    return hash.finish_hex();
}

Expected<std::string> sha256_file_hex(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return make_error(api_error::k_file_unreadable, "Cannot read " + file.string() + ".");
    Sha256 hash;
    std::array<char, 64 * 1024> buffer{};
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        hash.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
    }
    if (in.bad())
        return make_error(api_error::k_file_unreadable, "Reading " + file.string() + " failed.");
    return hash.finish_hex();
}

}  // namespace pybox
