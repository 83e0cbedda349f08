// `pybox key show`: this installation's public key, which verifies its receipts (docs/receipt.md
// "Signature"), as PEM and with its key id, for sharing. Offline: read from the runtime folder
// that pyboxd made it in; no daemon needed.
#include "client/commands.hpp"

#include "common/files.hpp"
#include "common/paths.hpp"
#include "common/signing_key.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::size_t k_max_public_key_file_bytes = 16 * 1024;

}  // namespace

Expected<TrustedKey> read_public_key_file(const std::filesystem::path& file)
{
    auto pem = read_file_capped(file, k_max_public_key_file_bytes);
    if (!pem) return make_error(pem.error().code, "Cannot read the public key " + file.string() + ": " + pem.error().message);
    auto key = public_key_from_pem(*pem);
    if (!key) return make_error(key.error().code, file.string() + ": " + key.error().message);
    return TrustedKey{file, std::move(*key)};
}

Expected<TrustedKey> local_public_key()
{
    auto paths = RuntimePaths::from_environment();
    if (!paths) return paths.error();
    std::vector<std::filesystem::path> candidates{paths->public_key_file()};
    const char* home = std::getenv("PYBOX_HOME");
    if (home == nullptr || *home == '\0') candidates.push_back(RuntimePaths(k_system_runtime).public_key_file());
    for (const auto& file : candidates) {
        std::error_code ec;
        if (std::filesystem::exists(file, ec)) return read_public_key_file(file);
    }
    std::string looked;
    for (const auto& file : candidates) looked += (looked.empty() ? "" : ", ") + file.string();
    return make_error("no_local_key", "This machine has no PyBox public key (looked for " + looked +
                                          "; pyboxd makes its key pair when it first starts). Give the signer's "
                                          "public key with --key PUB.pem.");
}

std::string render_public_key(const TrustedKey& key)
{
    return public_key_pem(key.public_key) + "key id: " + key_id(key.public_key) + "\nfile: " + key.file.string() + "\n";
}

Action configure_key(CLI::App& command)
{
    command.require_subcommand(1);
    auto* show = command.add_subcommand(
        "show", "Print this installation's public key (PEM) and its key id: whoever has it can verify its receipts");
    return [show] {
        if (!show->parsed()) return k_exit_pybox_failed;
        auto key = local_public_key();
        if (!key) return fail(key.error());
        write_bytes(stdout, render_public_key(*key));
        return 0;
    };
}

}  // namespace pybox::client
