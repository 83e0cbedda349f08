// Fuzz target: `pybox verify` reads a receipt file from anyone (proto/receipt_signature.hpp) and
// canonicalizes it (proto/canonical_json.hpp). Invariants: verification never crashes and
// accepts only a receipt whose signature the fixed key made over the rest (re-signing what it
// read gives the same signature: Ed25519 is deterministic); whatever JSON the strict reader
// takes, its canonical form, when it has one, is JSON that reads back to the same canonical
// form, or else holds an integer past 2^53 that is the text of a double but no double itself
// ("90071199254740990" for the double 90071199254740992), which the canonical form refuses
// rather than round, so that no two integers share one form.
#include "common/signing_key.hpp"
#include "proto/canonical_json.hpp"
#include "proto/receipt_signature.hpp"
#include "util/strict_json.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

// A key made for this target only; the seed corpus holds receipts it signed.
constexpr std::string_view k_fuzz_key_pem = "-----BEGIN PRIVATE KEY-----\n"
                                            "MC4CAQAwBQYDK2VwBCIEINb4E+r6sa1jc0N85k/0y96ja7F+k8qzqIGR8gMr3L5S\n"
                                            "-----END PRIVATE KEY-----\n";

const pybox::SigningKey& fuzz_key()
{
    static const pybox::SigningKey key = pybox::SigningKey::from_private_pem(k_fuzz_key_pem).value();
    return key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto& key = fuzz_key();
    if (pybox::proto::verify_receipt(text, key.public_key())) {
        auto parsed = pybox::util::parse_json_strictly(text, 64);
        if (!parsed.ok() || !parsed.value.is_object()) std::abort();
        boost::json::object receipt = parsed.value.as_object();
        const boost::json::value claimed = receipt.at("signature").at("value");
        if (!pybox::proto::sign_receipt(receipt, key) || receipt.at("signature").at("value") != claimed) std::abort();
    }
    auto parsed = pybox::util::parse_json_strictly(text, 64);
    if (!parsed.ok()) return 0;
    auto canonical = pybox::proto::canonical_json(parsed.value);
    if (!canonical) return 0;
    auto again = pybox::util::parse_json_strictly(*canonical, 64);
    if (!again.ok()) std::abort();
    auto second = pybox::proto::canonical_json(again.value);
    if (!second && second.error().message.find("is not exactly a double") != std::string::npos) return 0;
    if (!second || *second != *canonical) std::abort();
    return 0;
}
