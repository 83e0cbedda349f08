// Ed25519 keys and signatures through OpenSSL's EVP interface: the installation's key pair that
// signs receipts (docs/receipt.md "Signature"). A public key travels as its raw 32 bytes or as
// PEM (SubjectPublicKeyInfo); a private key only as PEM (PKCS #8), which the caller keeps in a
// private file. The key id is the lower-case hex SHA-256 of the raw public key. Pure apart from
// the randomness of generate(); the objects are immutable and safe to share between threads.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace pybox {

inline constexpr std::size_t k_ed25519_public_key_bytes = 32;
inline constexpr std::size_t k_ed25519_signature_bytes = 64;

class SigningKey {
public:
    // A new key pair from OpenSSL's CSPRNG. Fails with "key_unusable" only when OpenSSL does.
    static Expected<SigningKey> generate();
    // Reads a PKCS #8 PEM private key; "key_unusable" when it is not an Ed25519 one.
    static Expected<SigningKey> from_private_pem(std::string_view pem);

    std::string private_pem() const;
    std::string public_key() const;  // raw, 32 bytes
    // The 64-byte Ed25519 signature of `message`.
    std::string sign(std::string_view message) const;

    SigningKey(SigningKey&&) noexcept;
    SigningKey& operator=(SigningKey&&) noexcept;
    ~SigningKey();

private:
    struct Impl;
    explicit SigningKey(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// The raw 32 bytes of an Ed25519 public key in PEM; "key_unusable" for anything else.
Expected<std::string> public_key_from_pem(std::string_view pem);
// The PEM (SubjectPublicKeyInfo) of a raw Ed25519 public key (32 bytes).
std::string public_key_pem(std::string_view public_key);
// Lower-case hex SHA-256 of the raw public key.
std::string key_id(std::string_view public_key);
// Whether `signature` is a valid Ed25519 signature of `message` by `public_key` (raw bytes);
// false for a key or signature of the wrong size.
bool verify_signature(std::string_view public_key, std::string_view message, std::string_view signature);

}  // namespace pybox
