// `pybox verify RECEIPT.json [--key PUB.pem]`: checks a receipt's signature offline (no daemon):
// against the key in PUB.pem, or else this installation's public key (key.cpp). The key
// embedded in the receipt is never trusted by itself (docs/receipt.md "Signature").
#include "client/commands.hpp"

#include "common/files.hpp"
#include "proto/receipt_signature.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace pybox::client {

namespace {

constexpr const char* k_verify_footer =
    "Exit codes:\n"
    "  0    the receipt verifies: signed by the trusted key and unchanged since\n"
    "  1    it does not verify (not JSON, not signed, an unknown algorithm, another key, or\n"
    "       changed content); the line on stderr says which\n"
    "  125  it could not be checked (the file or the key cannot be read, no key is known)\n"
    "Without --key the trusted key is this installation's (pybox key show).";

struct VerifyOptions {
    std::filesystem::path receipt;
    std::filesystem::path key;
};

}  // namespace

Rendered render_verification(const Expected<proto::VerifiedReceipt>& verified, const TrustedKey& trusted)
{
    if (!verified)
        return {"pybox verify: NOT VERIFIED (" + verified.error().code + "): " + verified.error().message + "\n",
                k_exit_receipt_not_verified};
    auto known = [](const std::string& text) { return text.empty() ? std::string("(not in the receipt)") : text; };
    return {"Verified: the receipt is unchanged since key " + verified->key_id + " signed it.\n" +
                "  Signer          key " + verified->key_id + " (trusted from " + trusted.file.string() + ")\n" +
                "  Daemon          pyboxd " + known(verified->daemon_version) + "\n" +
                "  Run             " + known(verified->run_id) + ", started " + known(verified->created_at) + "\n" +
                "  Receipt schema  " + std::to_string(verified->schema_version) + "\n",
            0};
}

Action configure_verify(CLI::App& command)
{
    auto options = std::make_shared<VerifyOptions>();
    command.add_option("receipt", options->receipt, "The receipt (JSON, as `pybox exec --json` prints it)")
        ->type_name("RECEIPT.json")
        ->required();
    command.add_option("--key", options->key,
                       "Trust this public key (PEM, as `pybox key show` prints it) instead of this installation's")
        ->type_name("PUB.pem");
    command.footer(k_verify_footer);
    return [options] {
        auto text = read_file_capped(options->receipt, proto::k_max_receipt_text_bytes);
        if (!text) return fail(text.error());
        auto trusted = options->key.empty() ? local_public_key() : read_public_key_file(options->key);
        if (!trusted) return fail(trusted.error());
        return print(render_verification(proto::verify_receipt(*text, trusted->public_key), *trusted));
    };
}

}  // namespace pybox::client
