// The receipt's signature block (docs/receipt.md "Signature"): the installation's Ed25519
// signature over the RFC 8785 canonical form (canonical_json.hpp) of the receipt object without
// its "signature" key, added to the receipt as
//   "signature": {"algorithm": "Ed25519", "key_id": hex SHA-256 of the raw public key,
//                 "public_key": base64 of the raw 32 bytes, "value": base64 of the 64 bytes}.
// The embedded public key only says which key signed: verification trusts only the key the
// caller gives. Pure.
#pragma once

#include "common/error.hpp"
#include "common/signing_key.hpp"
#include "proto/receipt.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace pybox::proto {

inline constexpr std::string_view k_signature_algorithm = "Ed25519";
// The largest receipt file `pybox verify` reads (a receipt is at most a few hundred KiB).
inline constexpr std::size_t k_max_receipt_text_bytes = 16u << 20;

// Signs `receipt` in place, replacing any signature it has. Fails with "not_canonical" when
// the receipt holds what RFC 8785 cannot express (it then stays unsigned). The first signs a
// receipt as issued (its `signature`); the second, the JSON of one.
Expected<void> sign_receipt(Receipt& receipt, const SigningKey& key);
Expected<void> sign_receipt(boost::json::object& receipt, const SigningKey& key);

// What a verified receipt says of itself (read from the signed part; empty when it lacks one).
struct VerifiedReceipt {
    std::string key_id;
    std::string run_id;
    std::string created_at;      // identity.created_at
    std::string daemon_version;  // identity.daemon_version
    std::int64_t schema_version = 0;
};

// Verifies the text of a receipt against `trusted_public_key` (raw 32 bytes). Error codes, each
// with its own sentence: "not_json", "not_a_receipt" (not an object), "not_signed" (no
// "signature"), "unknown_algorithm", "invalid_signature_block" (missing or malformed fields, a
// key_id that is not the public key's), "wrong_key" (signed by another key: the sentence names
// both key ids), "not_canonical", "signature_mismatch" (the content changed after signing).
Expected<VerifiedReceipt> verify_receipt(std::string_view text, std::string_view trusted_public_key);
// The same for a receipt already read as JSON (from "not_signed" on).
Expected<VerifiedReceipt> verify_receipt(boost::json::object receipt, std::string_view trusted_public_key);

}  // namespace pybox::proto
