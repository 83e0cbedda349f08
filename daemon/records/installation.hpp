// This installation's random owner id, kept in <runtime>/installation.json and created on
// first use. Every box carries it as its pybox.owner label; the sweep touches no other box.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"
#include "common/signing_key.hpp"

#include <string>

namespace pybox::daemon {

Expected<std::string> load_or_create_installation_id(const RuntimePaths& paths);

// This installation's Ed25519 key pair, which signs its receipts: <runtime>/signing_key.pem
// (PKCS #8, 0600, read only if private as ssh reads a key: common/private_file.hpp) and its
// public key beside it, signing_key.pub.pem (0644), both made on first use. A public key file
// that is missing or does not match is written again. Errors: the private file's
// ("file_not_private", ...), "key_unusable" for a file that holds no Ed25519 key.
Expected<SigningKey> load_or_create_signing_key(const RuntimePaths& paths);

}  // namespace pybox::daemon
