#include "daemon/engine/engine_entry.hpp"

#include "common/api_error_codes.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace pybox::engine {

namespace {

constexpr std::size_t k_max_id = 32;
constexpr std::size_t k_max_user = 32;
constexpr std::size_t k_max_host = 253;
constexpr std::size_t k_max_dns_label = 63;
constexpr std::size_t k_max_context = 253;
constexpr std::size_t k_max_dns_subdomain = 253;
constexpr std::size_t k_fingerprint_base64 = 43;  // 32 bytes, unpadded

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool is_engine_id(std::string_view id)
{
    return !id.empty() && id.size() <= k_max_id && is_lower_alnum(id.front()) &&
           std::all_of(id.begin(), id.end(), [](char c) { return is_lower_alnum(c) || c == '-'; });
}

namespace {

// [a-z0-9] at both ends, [a-z0-9-] between, of any length.
bool is_label_text(std::string_view name)
{
    return !name.empty() && is_lower_alnum(name.front()) && is_lower_alnum(name.back()) &&
           std::all_of(name.begin(), name.end(), [](char c) { return is_lower_alnum(c) || c == '-'; });
}

}  // namespace

bool is_dns_label(std::string_view name)
{
    return name.size() <= k_max_dns_label && is_label_text(name);
}

bool is_dns_subdomain(std::string_view name)
{
    if (name.empty() || name.size() > k_max_dns_subdomain) return false;
    for (std::size_t start = 0;;) {
        const std::size_t dot = std::min(name.find('.', start), name.size());
        if (!is_label_text(name.substr(start, dot - start))) return false;
        if (dot == name.size()) return true;
        start = dot + 1;
    }
}

bool is_context_name(std::string_view name)
{
    return !name.empty() && name.size() <= k_max_context &&
           std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c <= '~'; });
}

namespace {

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
    return make_error(api_error::k_config_invalid, "an ssh engine URL must be ssh://user@host[:port]: " + std::string(why));
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

std::string_view engine_kind_name(EngineKind kind)
{
    switch (kind) {
    case EngineKind::docker: return "docker";
    case EngineKind::kubernetes: return "kubernetes";
    }
    return "docker";
}

Expected<EngineKind> parse_engine_kind(std::string_view name)
{
    constexpr std::array k_kinds{EngineKind::docker, EngineKind::kubernetes};
    std::string known;
    for (const auto kind : k_kinds) {
        if (engine_kind_name(kind) == name) return kind;
        known += (known.empty() ? "" : ", ") + std::string(engine_kind_name(kind));
    }
    return make_error(api_error::k_config_invalid,
                      "has an unknown kind \"" + std::string(name) + "\" (this build's kinds: " + known + ")");
}

bool is_sha256_fingerprint(std::string_view text)
{
    constexpr std::string_view prefix = "SHA256:";
    if (!text.starts_with(prefix) || text.size() != prefix.size() + k_fingerprint_base64) return false;
    return std::all_of(text.begin() + prefix.size(), text.end(),
                       [](char c) { return is_alnum(c) || c == '+' || c == '/'; });
}

std::string describe_engine_entry(const EngineEntry& entry)
{
    if (const auto* unix_socket = std::get_if<UnixSocketEngine>(&entry.where))
        return "unix://" + unix_socket->socket.string();
    if (const auto* cluster = std::get_if<KubeEngine>(&entry.where))
        return "kubernetes:" + cluster->namespace_name + "@" + cluster->context.value_or("current-context");
    const auto& address = std::get<SshEngine>(entry.where).address;
    const bool ipv6 = address.host.find(':') != std::string::npos;
    return "ssh://" + address.user + "@" + (ipv6 ? "[" + address.host + "]" : address.host) + ":" +
           std::to_string(address.port);
}

}  // namespace pybox::engine
