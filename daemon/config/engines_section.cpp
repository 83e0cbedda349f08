#include "daemon/config/engines_section.hpp"

#include "common/api_error_codes.hpp"
#include "common/posix.hpp"
#include "daemon/config/config_keys.hpp"
#include "daemon/config/config_values.hpp"
#include "daemon/engine/ssh_rules.hpp"
#include "util/path_value.hpp"

#include <boost/json/object.hpp>

#include <set>
#include <string>
#include <string_view>

namespace pybox::config {

namespace json = boost::json;

using engine::EngineEntry, engine::SshEngine, engine::UnixSocketEngine;

namespace {

Error invalid_entry(const std::filesystem::path& file, std::size_t index, std::string_view why)
{
    return config_invalid(file, "engines[" + std::to_string(index) + "]", why);
}

Expected<std::filesystem::path> absolute_path(const json::value& value, std::string_view key, std::size_t max_length,
                                              const std::filesystem::path& file, std::size_t index)
{
    if (auto problem = util::absolute_path_problem(value, max_length))
        return invalid_entry(file, index, "key \"" + std::string(key) + "\" " + *problem);
    return util::normal_path(value);
}

Expected<EngineEntry> parse_entry(const json::value& value, const std::filesystem::path& file, std::size_t index)
{
    const auto* object = value.if_object();
    if (object == nullptr) return invalid_entry(file, index, "must be an object");
    for (const auto& [key, ignored] : *object)
        if (find_config_key(k_engines_section, key) == nullptr)
            return invalid_entry(file, index,
                           "has an unknown key \"" + std::string(key) + "\" (known keys: " +
                               known_keys(k_engines_section) + ")");
    const auto* id = object->if_contains("id");
    if (id == nullptr || !id->is_string() || !engine::is_engine_id(id->get_string()))
        return invalid_entry(file, index, "needs an \"id\" of 1-32 lowercase letters, digits or '-', starting with a letter or digit");
    EngineEntry entry{std::string(id->get_string()), UnixSocketEngine{}};
    if (entry.id == engine::k_local_engine_id) return invalid_entry(file, index, "may not use the id \"local\" (the local engine's)");
    if (const auto* kind = object->if_contains("kind")) {
        if (!kind->is_string()) return invalid_entry(file, index, "has a key \"kind\" that is not a string");
        auto parsed = engine::parse_engine_kind(kind->get_string());
        if (!parsed) return invalid_entry(file, index, parsed.error().message);
        entry.kind = *parsed;
    }

    const auto* url = object->if_contains("url");
    if (url == nullptr || !url->is_string()) return invalid_entry(file, index, "needs a \"url\" string (unix:///... or ssh://...)");
    const std::string_view url_text = url->get_string();
    const bool has_ssh_keys = object->contains("engine_socket") || object->contains("identity_file") ||
                              object->contains("known_hosts") || object->contains("host_key");

    if (url_text.starts_with("unix://")) {
        if (has_ssh_keys)
            return invalid_entry(file, index, "is a unix socket engine: engine_socket, identity_file, known_hosts and host_key "
                                        "belong to ssh engines");
        auto socket = absolute_path(json::value(url_text.substr(7)), "url", k_max_unix_socket_path, file, index);
        if (!socket) return socket.error();
        entry.where = UnixSocketEngine{std::move(*socket)};
        return entry;
    }
    if (!url_text.starts_with("ssh://"))
        return invalid_entry(file, index, "has a \"url\" that is neither unix:///path nor ssh://user@host[:port]");
    auto address = engine::parse_ssh_address(url_text);
    if (!address) return invalid_entry(file, index, address.error().message);

    SshEngine ssh{std::move(*address), {}, {}, {}, {}};
    const auto* engine_socket = object->if_contains("engine_socket");
    const auto* identity_file = object->if_contains("identity_file");
    if (engine_socket == nullptr) return invalid_entry(file, index, "needs \"engine_socket\", the engine's socket on that host");
    if (identity_file == nullptr) return invalid_entry(file, index, "needs \"identity_file\", the private key to log in with");
    auto remote_socket = absolute_path(*engine_socket, "engine_socket", k_max_unix_socket_path, file, index);
    if (!remote_socket) return remote_socket.error();
    if (!engine::is_plain_remote_path(remote_socket->string()))
        return invalid_entry(file, index, "key \"engine_socket\" may hold only letters, digits and /._@+-");
    ssh.engine_socket = std::move(*remote_socket);
    auto identity = absolute_path(*identity_file, "identity_file", k_max_path_bytes, file, index);
    if (!identity) return identity.error();
    ssh.identity_file = std::move(*identity);

    const auto* known_hosts = object->if_contains("known_hosts");
    const auto* host_key = object->if_contains("host_key");
    if ((known_hosts == nullptr) == (host_key == nullptr))
        return invalid_entry(file, index, "needs exactly one pinned host key: \"known_hosts\" (a file) or \"host_key\" (SHA256:...)");
    if (known_hosts != nullptr) {
        auto path = absolute_path(*known_hosts, "known_hosts", k_max_path_bytes, file, index);
        if (!path) return path.error();
        ssh.known_hosts = std::move(*path);
    } else {
        if (!host_key->is_string() || !engine::is_sha256_fingerprint(host_key->get_string()))
            return invalid_entry(file, index, "has a \"host_key\" that is not SHA256: and 43 base64 characters (ssh-keygen -lf)");
        ssh.host_key_sha256 = std::string(host_key->get_string());
    }
    entry.where = std::move(ssh);
    return entry;
}

}  // namespace

Expected<std::vector<EngineEntry>> parse_engine_entries(const json::value& value, const std::filesystem::path& file)
{
    const auto* array = value.if_array();
    if (array == nullptr)
        return make_error(api_error::k_config_invalid, file.string() + ": key \"engines\" must be an array of engine objects.");
    if (array->size() > engine::k_max_extra_engines)
        return make_error(api_error::k_config_invalid, file.string() + ": key \"engines\" names more than " +
                                                std::to_string(engine::k_max_extra_engines) + " engines.");
    std::vector<EngineEntry> entries;
    std::set<std::string> ids;
    for (std::size_t index = 0; index < array->size(); ++index) {
        auto entry = parse_entry((*array)[index], file, index);
        if (!entry) return entry.error();
        if (!ids.insert(entry->id).second) return invalid_entry(file, index, "repeats the id \"" + entry->id + "\"");
        entries.push_back(std::move(*entry));
    }
    return entries;
}

}  // namespace pybox::config
