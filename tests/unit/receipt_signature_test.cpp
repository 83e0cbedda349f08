// The receipt's signature (proto/receipt_signature.hpp): a signed receipt verifies as printed,
// and any change of its content, of its signature block, or of the trusted key fails.
#include "proto/receipt_signature.hpp"

#include "common/signing_key.hpp"
#include "proto/receipt.hpp"
#include "tests/support/sample_receipt.hpp"
#include "util/json_writer.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace json = boost::json;
using pybox::SigningKey;
using pybox::proto::sign_receipt;
using pybox::proto::verify_receipt;

namespace {

SigningKey make_key()
{
    auto key = SigningKey::generate();
    REQUIRE(key.has_value());
    return std::move(*key);
}

json::object signed_sample(const SigningKey& key)
{
    json::object receipt = pybox::proto::receipt_to_json(pybox::test::sample_receipt()).as_object();
    REQUIRE(sign_receipt(receipt, key).has_value());
    return receipt;
}

// A different value of the same kind, so the change is one of content, not of shape.
json::value changed(const json::value& value)
{
    switch (value.kind()) {
    case json::kind::string: return json::value(std::string(value.get_string()) + "x");
    case json::kind::int64: return json::value(value.get_int64() + 1);
    case json::kind::uint64: return json::value(value.get_uint64() + 1);
    case json::kind::double_: return json::value(value.get_double() + 0.5);
    case json::kind::bool_: return json::value(!value.get_bool());
    case json::kind::null: return json::value("x");
    case json::kind::array: {
        json::array more = value.get_array();
        more.push_back(nullptr);
        return more;
    }
    case json::kind::object: {
        json::object more = value.get_object();
        more["added"] = 1;
        return more;
    }
    }
    return nullptr;
}

std::string error_code_of(const std::string& text, const std::string& trusted)
{
    auto verified = verify_receipt(text, trusted);
    REQUIRE_FALSE(verified.has_value());
    return verified.error().code;
}

}  // namespace

TEST_CASE("A signed receipt verifies as printed, and says who signed it, when and with which daemon")
{
    const auto key = make_key();
    const auto receipt = signed_sample(key);
    const auto& block = receipt.at("signature").as_object();
    CHECK(block.at("algorithm") == "Ed25519");
    CHECK(block.at("key_id").as_string() == pybox::key_id(key.public_key()));
    CHECK(block.size() == 4);
    auto verified = verify_receipt(pybox::util::to_json_text(receipt), key.public_key());
    REQUIRE(verified.has_value());
    CHECK(verified->key_id == pybox::key_id(key.public_key()));
    CHECK(verified->run_id == "5319e024aa0c4b6e9d1f00112233aabb");
    CHECK(verified->created_at == "2026-11-29T20:00:05.021506Z");
    CHECK(verified->daemon_version == "0.1.0+c0b8f2b");
    CHECK(verified->schema_version == 1);
}

TEST_CASE("A signed receipt still reads as a receipt, strictly")
{
    const auto key = make_key();
    const auto read = pybox::proto::receipt_from_json(signed_sample(key), pybox::util::ReadMode::strict);
    REQUIRE(read.has_value());
    CHECK(*read == pybox::test::sample_receipt());
}

TEST_CASE("Whitespace, key order and number spelling are not content: such a copy verifies")
{
    const auto key = make_key();
    const auto receipt = signed_sample(key);
    // Boost's serializer writes 2.0 as 2E0 and keeps no order of ours; the values are the same.
    CHECK(verify_receipt(json::serialize(receipt), key.public_key()).has_value());
    json::object reordered;
    for (auto it = receipt.end(); it != receipt.begin();) {
        --it;
        reordered[it->key()] = it->value();
    }
    CHECK(verify_receipt("\n " + json::serialize(reordered) + " \n", key.public_key()).has_value());
}

TEST_CASE("Changing or removing any top-level key of a signed receipt fails verification")
{
    const auto key = make_key();
    const auto receipt = signed_sample(key);
    for (const auto& member : receipt) {
        if (member.key() == "signature") continue;
        INFO(member.key());
        json::object mutated = receipt;
        mutated[member.key()] = changed(member.value());
        CHECK(error_code_of(pybox::util::to_json_text(mutated), key.public_key()) == "signature_mismatch");
        json::object removed = receipt;
        removed.erase(member.key());
        CHECK(error_code_of(pybox::util::to_json_text(removed), key.public_key()) == "signature_mismatch");
    }
    json::object added = receipt;
    added["added"] = true;
    CHECK(error_code_of(pybox::util::to_json_text(added), key.public_key()) == "signature_mismatch");
}

TEST_CASE("One changed byte of the program's output fails verification")
{
    const auto key = make_key();
    std::string text = pybox::util::to_json_text(signed_sample(key));
    const auto at = text.find("\"stdout\":\"42\\n\"");
    REQUIRE(at != std::string::npos);
    text[at + 11] = '3';
    const auto failed = verify_receipt(text, key.public_key());
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == "signature_mismatch");
    CHECK_THAT(failed.error().message, Catch::Contains("changed after key"));
}

TEST_CASE("A changed signature fails verification")
{
    const auto key = make_key();
    json::object receipt = signed_sample(key);
    std::string value(receipt.at("signature").at("value").as_string());
    value[0] = value[0] == 'A' ? 'B' : 'A';
    receipt["signature"].as_object()["value"] = value;
    CHECK(error_code_of(pybox::util::to_json_text(receipt), key.public_key()) == "signature_mismatch");
}

TEST_CASE("A receipt signed by another key fails, naming both key ids, even with that key embedded")
{
    const auto ours = make_key();
    const auto theirs = make_key();
    const auto text = pybox::util::to_json_text(signed_sample(theirs));
    const auto failed = verify_receipt(text, ours.public_key());
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == "wrong_key");
    CHECK_THAT(failed.error().message, Catch::Contains(pybox::key_id(theirs.public_key())) &&
                                           Catch::Contains(pybox::key_id(ours.public_key())));
    CHECK(verify_receipt(text, theirs.public_key()).has_value());
}

TEST_CASE("Each way a file is not a verifiable receipt has its own error")
{
    const auto key = make_key();
    const auto receipt = signed_sample(key);
    CHECK(error_code_of("{\"schema_version\": 1", key.public_key()) == "not_json");
    CHECK(error_code_of("{\"a\":1,\"a\":2}", key.public_key()) == "not_json");
    CHECK(error_code_of("[1]", key.public_key()) == "not_a_receipt");
    // JSON text whose number no double holds has no canonical form (the Python library agrees)
    CHECK(error_code_of("{\"x\":1e400}", key.public_key()) == "not_canonical");
    CHECK(error_code_of("{\"x\":1" + std::string(400, '0') + "}", key.public_key()) == "not_canonical");
    json::object unsigned_receipt = receipt;
    unsigned_receipt.erase("signature");
    CHECK(error_code_of(pybox::util::to_json_text(unsigned_receipt), key.public_key()) == "not_signed");
    json::object other_algorithm = receipt;
    other_algorithm["signature"].as_object()["algorithm"] = "RS256";
    CHECK(error_code_of(pybox::util::to_json_text(other_algorithm), key.public_key()) == "unknown_algorithm");
    json::object bad_id = receipt;
    bad_id["signature"].as_object()["key_id"] = std::string(64, '0');
    CHECK(error_code_of(pybox::util::to_json_text(bad_id), key.public_key()) == "invalid_signature_block");
    json::object short_key = receipt;
    short_key["signature"].as_object()["public_key"] = "AAAA";
    CHECK(error_code_of(pybox::util::to_json_text(short_key), key.public_key()) == "invalid_signature_block");
    json::object extra = receipt;
    extra["signature"].as_object()["note"] = "x";
    CHECK(error_code_of(pybox::util::to_json_text(extra), key.public_key()) == "invalid_signature_block");
}

TEST_CASE("A key pair survives its PEM forms, and a public key its PEM")
{
    const auto key = make_key();
    auto again = SigningKey::from_private_pem(key.private_pem());
    REQUIRE(again.has_value());
    CHECK(again->public_key() == key.public_key());
    CHECK(again->sign("x") == key.sign("x"));  // Ed25519 is deterministic
    auto public_key = pybox::public_key_from_pem(pybox::public_key_pem(key.public_key()));
    REQUIRE(public_key.has_value());
    CHECK(*public_key == key.public_key());
    CHECK(pybox::key_id(key.public_key()).size() == 64);
    CHECK_FALSE(pybox::public_key_from_pem(key.private_pem()).has_value());
    CHECK_FALSE(SigningKey::from_private_pem(pybox::public_key_pem(key.public_key())).has_value());
    CHECK_FALSE(pybox::verify_signature(key.public_key(), "x", std::string(64, '\0')));
}
