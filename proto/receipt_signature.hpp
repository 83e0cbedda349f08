// The receipt's signature block (docs/receipt.md "Signature"): the installation's Ed25519
// signature over the RFC 8785 canonical form (canonical_json.hpp) of the receipt object without
// its "signature" key, added to the receipt as
//   "signature": {"algorithm": "Ed25519", "key_id": hex SHA-256 of the raw public key,
//                 "public_key": base64 of the raw 32 bytes, "value": base64 of the 64 bytes}.
// The embedded public key only says which key signed: verification trusts only the key the
// caller gives. Pure.
//
// A receipt is issued once (issue_receipt): written once as JSON, that writing signed once over
// its RFC 8785 form, and the text of that same writing, with the block last, is what the daemon
// keeps, answers and streams (IssuedReceipt). Nothing else signs a typed receipt, so no other
// writing of it can carry a signature.
#pragma once

#include "common/error.hpp"
#include "common/signing_key.hpp"
#include "proto/receipt.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pybox::proto {

inline constexpr std::string_view k_signature_algorithm = "Ed25519";
// The largest receipt file `pybox verify` reads (a receipt is at most a few hundred KiB).
inline constexpr std::size_t k_max_receipt_text_bytes = 16u << 20;

class IssuedReceipt;

// Issues `receipt`: writes it as JSON once (receipt_to_json, replacing any signature it has),
// signs the RFC 8785 form of that writing, adds the block, and keeps the text. A receipt that
// holds what RFC 8785 cannot express goes out unsigned, not_signed() saying why
// ("not_canonical").
IssuedReceipt issue_receipt(Receipt receipt, const SigningKey& key);

// A receipt as the daemon issued it: the receipt (its `signature` set when signed) and its one
// text (util::to_json_text's form, "signature" last), the bytes that are kept, answered and
// streamed. Only issue_receipt() makes one, so the text is always that receipt's own writing;
// neither can be changed without the other (an IssuedReceipt is only read, copied or replaced
// whole).
class IssuedReceipt {
public:
    const Receipt& receipt() const { return m_receipt; }
    const std::string& text() const { return m_text; }
    // Why it went out unsigned; nullopt when it was signed.
    const std::optional<Error>& not_signed() const { return m_not_signed; }

private:
    IssuedReceipt(Receipt receipt, std::string text, std::optional<Error> not_signed)
        : m_receipt(std::move(receipt)), m_text(std::move(text)), m_not_signed(std::move(not_signed))
    {
    }
    friend IssuedReceipt issue_receipt(Receipt receipt, const SigningKey& key);

    Receipt m_receipt;
    std::string m_text;
    std::optional<Error> m_not_signed;
};

// Signs the JSON of a receipt in place, replacing any signature it has (tests, tools); fails with
// "not_canonical" as issue_receipt() goes unsigned.
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
