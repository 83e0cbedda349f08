#include "daemon/engine/engine_entry.hpp"

#include "common/posix.hpp"
#include "daemon/engine/ssh_rules.hpp"

#include <boost/json/object.hpp>

#include <algorithm>
#include <charconv>
#include <set>

namespace pybox::engine {

namespace json = boost::json;

namespace {

constexpr std::size_t k_max_id = 32;
constexpr std::size_t k_max_user = 32;
constexpr std::size_t k_max_host = 253;
constexpr std::size_t k_fingerprint_base64 = 43;  // 32 bytes, unpadded

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

bool is_engine_id(std::string_view id)
{
    return !id.empty() && id.size() <= k_max_id && is_lower_alnum(id.front()) &&
           std::all_of(id.begin(), id.end(), [](char c) { return is_lower_alnum(c) || c == '-'; });
}

bool is_user_name(std::string_view user)
{
    return !user.empty() && user.size() <= k_max_user && user.front() != '-' &&
           std::all_of(user.begin(), user.end(), [](char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool is_host_name(std::string_view host)
{
    return !host.empty() && host.size() <= k_max_host && host.front() != '-' && host.front() != '.' &&
           std::all_of(host.begin(), host.end(), [](char c) { return is_alnum(c) || c == '.' || c == '-'; });
}

bool is_ipv6_literal(std::string_view host)
{
    return host.size() >= 2 && host.size() <= 45 && host.find(':') != std::string_view::npos &&
           std::all_of(host.begin(), host.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
           });
}

Error address_error(std::string_view why)
{
    return make_error("config_invalid", "an ssh engine URL must be ssh://user@host[:port]: " + std::string(why));
}

Error invalid(const std::filesystem::path& file, std::size_t index, std::string_view why)
{
    return make_error("config_invalid", file.string() + ": engines[" + std::to_string(index) + "] " +
                                            std::string(why) + ".");
}

Expected<std::filesystem::path> absolute_path(const json::value& value, std::string_view key, std::size_t max_length,
                                              const std::filesystem::path& file, std::size_t index)
{
    const auto* text = value.if_string();
    const std::string prefix = "key \"" + std::string(key) + "\" ";
    if (text == nullptr) return invalid(file, index, prefix + "must be a string");
    const std::string_view view = *text;
    if (view.empty() || view.front() != '/') return invalid(file, index, prefix + "must be an absolute path");
    if (view.find('\0') != std::string_view::npos) return invalid(file, index, prefix + "must not contain NUL bytes");
    if (view.size() > max_length)
        return invalid(file, index, prefix + "is longer than " + std::to_string(max_length) + " bytes");
    return std::filesystem::path(std::string(view)).lexically_normal();
}

Expected<EngineEntry> parse_entry(const json::value& value, const std::filesystem::path& file, std::size_t index)
{
    const auto* object = value.if_object();
    if (object == nullptr) return invalid(file, index, "must be an object");
    for (const auto& [key, ignored] : *object) {
        static constexpr std::string_view known[] = {"id", "url", "engine_socket", "identity_file", "known_hosts",
                                                     "host_key"};
        if (std::find(std::begin(known), std::end(known), std::string_view(key)) == std::end(known))
            return invalid(file, index,
                           "has an unknown key \"" + std::string(key) +
                               "\" (known keys: id, url, engine_socket, identity_file, known_hosts, host_key)");
    }
    const auto* id = object->if_contains("id");
    if (id == nullptr || !id->is_string() || !is_engine_id(id->get_string()))
        return invalid(file, index, "needs an \"id\" of 1-32 lowercase letters, digits or '-', starting with a letter or digit");
    EngineEntry entry{std::string(id->get_string()), UnixSocketEngine{}};
    if (entry.id == k_local_engine_id) return invalid(file, index, "may not use the id \"local\" (the local engine's)");

    const auto* url = object->if_contains("url");
    if (url == nullptr || !url->is_string()) return invalid(file, index, "needs a \"url\" string (unix:///... or ssh://...)");
    const std::string_view url_text = url->get_string();
    const bool has_ssh_keys = object->contains("engine_socket") || object->contains("identity_file") ||
                              object->contains("known_hosts") || object->contains("host_key");

    if (url_text.starts_with("unix://")) {
        if (has_ssh_keys)
            return invalid(file, index, "is a unix socket engine: engine_socket, identity_file, known_hosts and host_key "
                                        "belong to ssh engines");
        auto socket = absolute_path(json::value(url_text.substr(7)), "url", k_max_unix_socket_path, file, index);
        if (!socket) return socket.error();
        entry.where = UnixSocketEngine{std::move(*socket)};
        return entry;
    }
    if (!url_text.starts_with("ssh://"))
        return invalid(file, index, "has a \"url\" that is neither unix:///path nor ssh://user@host[:port]");
    auto address = parse_ssh_address(url_text);
    if (!address) return invalid(file, index, address.error().message);

    SshEngine ssh{std::move(*address), {}, {}, {}, {}};
    const auto* engine_socket = object->if_contains("engine_socket");
    const auto* identity_file = object->if_contains("identity_file");
    if (engine_socket == nullptr) return invalid(file, index, "needs \"engine_socket\", the engine's socket on that host");
    if (identity_file == nullptr) return invalid(file, index, "needs \"identity_file\", the private key to log in with");
    auto remote_socket = absolute_path(*engine_socket, "engine_socket", k_max_unix_socket_path, file, index);
    if (!remote_socket) return remote_socket.error();
    if (!is_plain_remote_path(remote_socket->string()))
        return invalid(file, index, "key \"engine_socket\" may hold only letters, digits and /._@+-");
    ssh.engine_socket = std::move(*remote_socket);
    auto identity = absolute_path(*identity_file, "identity_file", k_max_path_bytes, file, index);
    if (!identity) return identity.error();
    ssh.identity_file = std::move(*identity);

    const auto* known_hosts = object->if_contains("known_hosts");
    const auto* host_key = object->if_contains("host_key");
    if ((known_hosts == nullptr) == (host_key == nullptr))
        return invalid(file, index, "needs exactly one pinned host key: \"known_hosts\" (a file) or \"host_key\" (SHA256:...)");
    if (known_hosts != nullptr) {
        auto path = absolute_path(*known_hosts, "known_hosts", k_max_path_bytes, file, index);
        if (!path) return path.error();
        ssh.known_hosts = std::move(*path);
    } else {
        if (!host_key->is_string() || !is_sha256_fingerprint(host_key->get_string()))
            return invalid(file, index, "has a \"host_key\" that is not SHA256: and 43 base64 characters (ssh-keygen -lf)");
        ssh.host_key_sha256 = std::string(host_key->get_string());
    }
    entry.where = std::move(ssh);
    return entry;
}

}  // namespace

Expected<SshAddress> parse_ssh_address(std::string_view url)
{
    if (!url.starts_with("ssh://")) return address_error("it does not start with ssh://");
    std::string_view rest = url.substr(6);
    const auto at = rest.find('@');
    if (at == std::string_view::npos) return address_error("it names no user");
    SshAddress address;
    address.user = std::string(rest.substr(0, at));
    if (address.user.find(':') != std::string::npos) return address_error("a password does not belong in it");
    if (!is_user_name(address.user)) return address_error("the user name is not 1-32 of letters, digits, '.', '_', '-'");
    rest = rest.substr(at + 1);

    std::string_view port_text;
    if (rest.starts_with('[')) {
        const auto close = rest.find(']');
        if (close == std::string_view::npos) return address_error("an IPv6 address lacks its ']'");
        address.host = std::string(rest.substr(1, close - 1));
        if (!is_ipv6_literal(address.host)) return address_error("the IPv6 address is malformed");
        rest = rest.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return address_error("only a :port may follow the host");
            port_text = rest.substr(1);
            if (port_text.empty()) return address_error("the port is empty");
        }
    } else {
        const auto colon = rest.find(':');
        address.host = std::string(rest.substr(0, colon));
        if (!is_host_name(address.host)) return address_error("the host is not a name or an address");
        if (colon != std::string_view::npos) {
            port_text = rest.substr(colon + 1);
            if (port_text.empty()) return address_error("the port is empty");
        }
    }
    if (!port_text.empty()) {
        unsigned port = 0;
        const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc{} || end != port_text.data() + port_text.size() || port == 0 || port > 65535 ||
            port_text.front() == '0')
            return address_error("the port is not a number from 1 to 65535 (and nothing may follow it)");
        address.port = static_cast<std::uint16_t>(port);
    }
    return address;
}

bool is_sha256_fingerprint(std::string_view text)
{
    constexpr std::string_view prefix = "SHA256:";
    if (!text.starts_with(prefix) || text.size() != prefix.size() + k_fingerprint_base64) return false;
    return std::all_of(text.begin() + prefix.size(), text.end(),
                       [](char c) { return is_alnum(c) || c == '+' || c == '/'; });
}

Expected<std::vector<EngineEntry>> parse_engine_entries(const json::value& value, const std::filesystem::path& file)
{
    const auto* array = value.if_array();
    if (array == nullptr)
        return make_error("config_invalid", file.string() + ": key \"engines\" must be an array of engine objects.");
    if (array->size() > k_max_extra_engines)
        return make_error("config_invalid", file.string() + ": key \"engines\" names more than " +
                                                std::to_string(k_max_extra_engines) + " engines.");
    std::vector<EngineEntry> entries;
    std::set<std::string> ids;
    for (std::size_t index = 0; index < array->size(); ++index) {
        auto entry = parse_entry((*array)[index], file, index);
        if (!entry) return entry.error();
        if (!ids.insert(entry->id).second) return invalid(file, index, "repeats the id \"" + entry->id + "\"");
        entries.push_back(std::move(*entry));
    }
    return entries;
}

std::string describe_engine_entry(const EngineEntry& entry)
{
    if (const auto* unix_socket = std::get_if<UnixSocketEngine>(&entry.where))
        return "unix://" + unix_socket->socket.string();
    const auto& address = std::get<SshEngine>(entry.where).address;
    const bool ipv6 = address.host.find(':') != std::string::npos;
    return "ssh://" + address.user + "@" + (ipv6 ? "[" + address.host + "]" : address.host) + ":" +
           std::to_string(address.port);
}

}  // namespace pybox::engine
