// What `pybox verify`, `pybox key show` and `pybox receipts` print (client/verify.cpp, key.cpp,
// receipts.cpp), from their answers alone.
#include "client/commands.hpp"

#include "common/signing_key.hpp"
#include "proto/receipt.hpp"
#include "proto/receipt_signature.hpp"
#include "tests/support/sample_answers.hpp"
#include "tests/support/sample_receipt.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox;

TEST_CASE("pybox verify says who signed a verified receipt, with which daemon and when, and exits 0")
{
    const auto key = SigningKey::generate().value();
    auto receipt = proto::receipt_to_json(test::sample_receipt()).as_object();
    REQUIRE(proto::sign_receipt(receipt, key).has_value());
    const client::TrustedKey trusted{"/k/pub.pem", key.public_key()};
    const auto shown = client::render_verification(proto::verify_receipt(util::to_json_text(receipt), key.public_key()), trusted);
    CHECK(shown.exit_code == 0);
    CHECK_THAT(shown.text, Catch::StartsWith("Verified: ") && Catch::Contains("key " + key_id(key.public_key())) &&
                               Catch::Contains("(trusted from /k/pub.pem)") && Catch::Contains("pyboxd 0.1.0+c0b8f2b") &&
                               Catch::Contains("5319e024aa0c4b6e9d1f00112233aabb, started 2026-11-29T20:00:05.021506Z") &&
                               Catch::Contains("Receipt schema  1"));
}

TEST_CASE("pybox verify names the failure's code and exits 1 when a receipt does not verify")
{
    const client::TrustedKey trusted{"/k/pub.pem", std::string(32, 'k')};
    const auto shown = client::render_verification(make_error("signature_mismatch", "The content changed."), trusted);
    CHECK(shown.exit_code == client::k_exit_receipt_not_verified);
    CHECK(shown.text == "pybox verify: NOT VERIFIED (signature_mismatch): The content changed.\n");
}

TEST_CASE("pybox key show prints the PEM, the key id and the file it came from")
{
    const auto key = SigningKey::generate().value();
    const auto text = client::render_public_key({"/r/signing_key.pub.pem", key.public_key()});
    CHECK_THAT(text, Catch::StartsWith("-----BEGIN PUBLIC KEY-----\n") &&
                         Catch::Contains("-----END PUBLIC KEY-----\nkey id: " + key_id(key.public_key()) +
                                         "\nfile: /r/signing_key.pub.pem\n"));
    CHECK(*public_key_from_pem(text) == key.public_key());
}

TEST_CASE("pybox receipts prints one line per kept receipt, newest first, marking one that did not verify with why")
{
    const auto shown = client::render_receipt_list(test::sample_receipts());
    CHECK(shown.exit_code == 0);
    CHECK(shown.text ==
          "RUN ID                            TIME                         IMAGE       EXIT  MECHANISM               BYTES\n"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  2026-12-01T03:00:00.000001Z  stdlib      0     TARGET_EXIT_OBSERVED    4321\n"
          "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  2026-12-01T02:00:00.000001Z  data        -     NOT_STARTED             2100"
          "  NOT VERIFIED: Its signature does not verify with this installation's key (not_signed): The receipt has "
          "no signature block.\n");
    CHECK_THAT(client::render_receipt_list({{}, 1000, 1}).text, Catch::Contains("No receipts kept yet"));
}

TEST_CASE("pybox receipts show prints the short view and the signer of a kept receipt")
{
    const auto key = SigningKey::generate().value();
    auto receipt = proto::receipt_to_json(test::sample_receipt()).as_object();
    REQUIRE(proto::sign_receipt(receipt, key).has_value());
    const std::string run_id = test::sample_receipt().identity.run_id;
    const auto shown = client::render_kept_receipt(receipt, run_id);
    CHECK(shown.exit_code == 0);
    CHECK_THAT(shown.text, Catch::StartsWith("PyBox receipt · run 5319e024") &&
                               Catch::Contains("Signed by             key " + key_id(key.public_key())));
    receipt.erase("signature");
    CHECK_THAT(client::render_kept_receipt(receipt, run_id).text, Catch::Contains("none (unsigned)"));
}

TEST_CASE("pybox receipts show refuses a receipt of another run than the one asked for")
{
    const auto receipt = proto::receipt_to_json(test::sample_receipt());
    const std::string asked(32, 'f');
    const auto shown = client::render_kept_receipt(receipt, asked);
    CHECK(shown.exit_code == client::k_exit_pybox_failed);
    CHECK(shown.text == "pybox: pyboxd answered the receipt of run " + test::sample_receipt().identity.run_id +
                            " for run " + asked + "; it is not shown.\n");
}
