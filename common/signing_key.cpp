#include "common/signing_key.hpp"

#include "common/api_error_codes.hpp"
#include "common/sha256.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <stdexcept>

namespace pybox {

namespace {

struct PkeyFree {
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct BioFree {
    void operator()(BIO* bio) const { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
struct MdCtxFree {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

Error unusable(std::string why) { return make_error(api_error::k_key_unusable, std::move(why)); }

Bio memory_bio(std::string_view text)
{
    return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string drain(BIO* bio)
{
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<std::size_t>(length));
}

std::string raw_public(EVP_PKEY* key)
{
    std::string raw(k_ed25519_public_key_bytes, '\0');
    std::size_t length = raw.size();
    if (EVP_PKEY_get_raw_public_key(key, reinterpret_cast<unsigned char*>(raw.data()), &length) != 1 ||
        length != raw.size())
        throw std::runtime_error("OpenSSL could not give an Ed25519 public key's bytes");
    return raw;
}

}  // namespace

struct SigningKey::Impl {
    Pkey key;
};

SigningKey::SigningKey(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
SigningKey::SigningKey(SigningKey&&) noexcept = default;
SigningKey& SigningKey::operator=(SigningKey&&) noexcept = default;
SigningKey::~SigningKey() = default;

Expected<SigningKey> SigningKey::generate()
{
    Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
    if (!key) return unusable("OpenSSL could not make an Ed25519 key pair.");
    return SigningKey(std::make_unique<Impl>(Impl{std::move(key)}));
}

Expected<SigningKey> SigningKey::from_private_pem(std::string_view pem)
{
    auto bio = memory_bio(pem);
    Pkey key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519)
        return unusable("The file does not hold an Ed25519 private key in PEM.");
    return SigningKey(std::make_unique<Impl>(Impl{std::move(key)}));
}

std::string SigningKey::private_pem() const
{
    Bio bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), m_impl->key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        throw std::runtime_error("OpenSSL could not write an Ed25519 private key");
    return drain(bio.get());
}

std::string SigningKey::public_key() const { return raw_public(m_impl->key.get()); }

std::string SigningKey::sign(std::string_view message) const
{
    MdCtx ctx(EVP_MD_CTX_new());
    std::string signature(k_ed25519_signature_bytes, '\0');
    std::size_t length = signature.size();
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, m_impl->key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                       reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
        length != signature.size())
        throw std::runtime_error("OpenSSL could not make an Ed25519 signature");
    return signature;
}

Expected<std::string> public_key_from_pem(std::string_view pem)
{
    auto bio = memory_bio(pem);
    Pkey key(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519)
        return unusable("The file does not hold an Ed25519 public key in PEM (\"-----BEGIN PUBLIC KEY-----\").");
    return raw_public(key.get());
}

std::string public_key_pem(std::string_view public_key)
{
    Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                         reinterpret_cast<const unsigned char*>(public_key.data()), public_key.size()));
    Bio bio(BIO_new(BIO_s_mem()));
    if (!key || !bio || PEM_write_bio_PUBKEY(bio.get(), key.get()) != 1)
        throw std::runtime_error("OpenSSL could not write an Ed25519 public key");
    return drain(bio.get());
}

std::string key_id(std::string_view public_key) { return sha256_hex(public_key); }

bool verify_signature(std::string_view public_key, std::string_view message, std::string_view signature)
{
    if (public_key.size() != k_ed25519_public_key_bytes || signature.size() != k_ed25519_signature_bytes) return false;
    Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                         reinterpret_cast<const unsigned char*>(public_key.data()), public_key.size()));
    MdCtx ctx(EVP_MD_CTX_new());
    return key && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) == 1 &&
           EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                            reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

}  // namespace pybox
