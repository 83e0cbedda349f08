#include "daemon/records/installation.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "common/ids.hpp"
#include "common/private_file.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace pybox::daemon {

namespace json = boost::json;

namespace {

bool is_hex_id(std::string_view text)
{
    return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

}  // namespace

Expected<std::string> load_or_create_installation_id(const RuntimePaths& paths)
{
    const auto file = paths.installation_file();
    auto existing = read_file_capped(file, 4096);
    if (existing) {
        boost::system::error_code ec;
        const json::value document = json::parse(*existing, ec);
        const json::object* object = ec ? nullptr : document.if_object();
        const json::value* id = object ? object->if_contains("installation_id") : nullptr;
        if (id == nullptr || !id->is_string() || !is_hex_id(id->as_string()))
            return make_error(api_error::k_installation_corrupt,
                              file.string() + " is damaged; move it away and PyBox will make a new one "
                                              "(boxes labelled with the old id are then left to you).");
        return std::string(id->as_string());
    }
    if (existing.error().code != api_error::k_file_missing) return existing.error();
    std::string id = random_id_128();
    if (auto written = write_file_atomic(file, json::serialize(json::object{{"installation_id", id}}) + "\n");
        !written)
        return written.error();
    return id;
}

Expected<SigningKey> load_or_create_signing_key(const RuntimePaths& paths)
{
    constexpr std::size_t k_max_key_file_bytes = 16 * 1024;
    const auto file = paths.signing_key_file();
    auto pem = read_private_file(file, k_max_key_file_bytes);
    if (!pem && pem.error().code != api_error::k_file_missing) return pem.error();
    auto key = pem ? SigningKey::from_private_pem(*pem) : SigningKey::generate();
    if (!key)
        return make_error(key.error().code, file.string() + " holds no Ed25519 private key in PEM; move it away and "
                                                            "pyboxd makes a new key pair (receipts signed with the "
                                                            "old key then verify only with its public key).");
    if (!pem)
        if (auto written = write_file_atomic(file, key->private_pem(), 0600); !written) return written.error();
    const std::string public_pem = public_key_pem(key->public_key());
    auto existing = read_file_capped(paths.public_key_file(), k_max_key_file_bytes);
    if (!existing || *existing != public_pem)
        if (auto written = write_file_atomic(paths.public_key_file(), public_pem, 0644); !written) return written.error();
    return key;
}

}  // namespace pybox::daemon
