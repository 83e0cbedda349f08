#include "proto/receipt_signature.hpp"

#include "common/api_error_codes.hpp"
#include "proto/canonical_json.hpp"
#include "util/json_writer.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <boost/json/value.hpp>

namespace pybox::proto {

namespace json = boost::json;

namespace {

// Receipts nest evidence a few levels deep; this leaves ample room and bounds the reader.
constexpr std::size_t k_max_receipt_depth = 64;

Error bad_block(const std::string& why)
{
    return make_error(api_error::k_invalid_signature_block, "The receipt's signature block is not valid: " + why + ".");
}

std::string string_at(const json::object& object, std::string_view key)
{
    const json::value* value = object.if_contains(key);
    return value != nullptr && value->is_string() ? std::string(value->get_string()) : std::string();
}

// The signature over an unsigned receipt's JSON.
Expected<SignatureBlock> signature_over(const json::object& unsigned_receipt, const SigningKey& key)
{
    auto canonical = canonical_json(unsigned_receipt);
    if (!canonical) return canonical.error();
    const std::string public_key = key.public_key();
    return SignatureBlock{std::string(k_signature_algorithm), pybox::key_id(public_key), util::base64_encode(public_key),
                          util::base64_encode(key.sign(*canonical))};
}

}  // namespace

IssuedReceipt issue_receipt(Receipt receipt, const SigningKey& key)
{
    receipt.signature.reset();
    json::value written = receipt_to_json(receipt);
    std::optional<Error> not_signed;
    if (auto block = signature_over(written.as_object(), key)) {
        written.as_object()["signature"] = to_json(*block);
        receipt.signature = std::move(*block);
    } else {
        not_signed = block.error();
    }
    std::string text = util::to_json_text(written);
    return IssuedReceipt(std::move(receipt), std::move(text), std::move(not_signed));
}

Expected<void> sign_receipt(json::object& receipt, const SigningKey& key)
{
    receipt.erase("signature");
    auto block = signature_over(receipt, key);
    if (!block) return block.error();
    receipt["signature"] = to_json(*block);
    return {};
}

Expected<VerifiedReceipt> verify_receipt(std::string_view text, std::string_view trusted_public_key)
{
    auto parsed = util::parse_json_strictly(text, k_max_receipt_depth);
    if (parsed.duplicate_key)
        return make_error(api_error::k_not_json, "The receipt repeats the key \"" + util::printable_excerpt(*parsed.duplicate_key) +
                                          "\", so it has no single meaning.");
    if (parsed.number_too_large)
        return make_error(api_error::k_not_canonical, "The receipt holds a number beyond a double's range (at byte " +
                                               std::to_string(parsed.at_byte) + "), which has no canonical form.");
    if (!parsed.ok())
        return make_error(api_error::k_not_json, "The receipt is not JSON: " + parsed.problem + " (at byte " +
                                          std::to_string(parsed.at_byte) + ").");
    json::object* receipt = parsed.value.if_object();
    if (receipt == nullptr) return make_error(api_error::k_not_a_receipt, "The JSON is not a receipt: it is not an object.");
    return verify_receipt(std::move(*receipt), trusted_public_key);
}

Expected<VerifiedReceipt> verify_receipt(json::object receipt, std::string_view trusted_public_key)
{
    const json::value* block_value = receipt.if_contains("signature");
    if (block_value == nullptr)
        return make_error(api_error::k_not_signed, "The receipt has no signature block: it was not issued by a pyboxd that signs "
                                        "receipts, or the block was removed.");
    const json::object* block = block_value->if_object();
    if (block == nullptr) return bad_block("it is not an object");
    for (const auto& member : *block)
        if (member.key() != "algorithm" && member.key() != "key_id" && member.key() != "public_key" &&
            member.key() != "value")
            return bad_block("it has the unknown key \"" + util::printable_excerpt(member.key(), 64) + "\"");
    const std::string algorithm = string_at(*block, "algorithm");
    if (algorithm != k_signature_algorithm)
        return make_error(api_error::k_unknown_algorithm, "The receipt is signed with \"" + util::printable_excerpt(algorithm, 64) +
                                                   "\", which this pybox does not know (it knows Ed25519).");
    const auto public_key = util::base64_decode(string_at(*block, "public_key"));
    if (!public_key || public_key->size() != k_ed25519_public_key_bytes)
        return bad_block("public_key is not the base64 of 32 bytes");
    const auto signature = util::base64_decode(string_at(*block, "value"));
    if (!signature || signature->size() != k_ed25519_signature_bytes)
        return bad_block("value is not the base64 of 64 bytes");
    const std::string signer = key_id(*public_key);
    if (string_at(*block, "key_id") != signer) return bad_block("key_id is not the SHA-256 of public_key");
    if (*public_key != trusted_public_key)
        return make_error(api_error::k_wrong_key, "The receipt was signed by key " + signer + ", not by the trusted key " +
                                           key_id(trusted_public_key) +
                                           ": it comes from another installation (give its public key with --key "
                                           "if you trust it), or its block was replaced.");
    receipt.erase("signature");
    auto canonical = canonical_json(receipt);
    if (!canonical) return canonical.error();
    if (!verify_signature(*public_key, *canonical, *signature))
        return make_error(api_error::k_signature_mismatch, "The signature does not match the receipt's content: the receipt was "
                                                "changed after key " + signer + " signed it.");
    VerifiedReceipt verified;
    verified.key_id = signer;
    if (const json::value* identity = receipt.if_contains("identity"); identity != nullptr && identity->is_object()) {
        verified.run_id = string_at(identity->get_object(), "run_id");
        verified.created_at = string_at(identity->get_object(), "created_at");
        verified.daemon_version = string_at(identity->get_object(), "daemon_version");
    }
    if (const json::value* schema = receipt.if_contains("schema_version"); schema != nullptr && schema->is_int64())
        verified.schema_version = schema->get_int64();
    return verified;
}

}  // namespace pybox::proto
