#include "daemon/registry/pinned_reference.hpp"

#include "common/api_error_codes.hpp"
#include "util/host_address.hpp"
#include "util/text.hpp"

#include <charconv>
#include <vector>

namespace pybox::registry {

namespace {

constexpr std::size_t k_max_repository_bytes = 255;
constexpr std::size_t k_max_components = 8;

Error not_pinned(std::string_view text, std::string_view why)
{
    return make_error(api_error::k_image_reference_invalid,
                      "\"" + util::printable_excerpt(text, 128) + "\" is not a pinned image reference: " + std::string(why) + ".");
}

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*
bool is_path_component(std::string_view part)
{
    std::size_t i = 0;
    while (true) {
        const std::size_t run = i;
        while (i < part.size() && is_lower_alnum(part[i])) ++i;
        if (i == run) return false;
        if (i == part.size()) return true;
        if (part[i] == '.') {
            ++i;
        } else if (part[i] == '_') {
            i += part.substr(i, 2) == "__" ? 2U : 1U;
        } else if (part[i] == '-') {
            while (i < part.size() && part[i] == '-') ++i;
        } else {
            return false;
        }
    }
}

bool is_dns_name(std::string_view name)
{
    if (name.empty() || name.size() > 253) return false;
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('.', start), name.size());
        const std::string_view label = name.substr(start, end - start);
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
        for (const char c : label) {
            if (!is_lower_alnum(c) && !(c >= 'A' && c <= 'Z') && c != '-') return false;
        }
        start = end + 1;
    }
    return true;
}

Expected<RegistryHost> parse_host(std::string_view text, std::string_view whole)
{
    RegistryHost host;
    std::string_view port_text;
    if (text.starts_with('[')) {
        const auto close = text.find(']');
        if (close == std::string_view::npos) return not_pinned(whole, "its IPv6 host has no closing ']'");
        host.host = std::string(text.substr(1, close - 1));
        if (host.host.find(':') == std::string::npos || !util::is_ip_address(host.host))
            return not_pinned(whole, "the host in brackets is not an IPv6 address");
        const std::string_view after = text.substr(close + 1);
        if (!after.empty()) {
            if (!after.starts_with(':')) return not_pinned(whole, "its host is followed by something other than a port");
            port_text = after.substr(1);
            if (port_text.empty()) return not_pinned(whole, "its port is empty");
        }
    } else {
        const auto colon = text.find(':');
        host.host = std::string(text.substr(0, colon));
        if (colon != std::string_view::npos) {
            port_text = text.substr(colon + 1);
            if (port_text.empty()) return not_pinned(whole, "its port is empty");
        }
        if (!is_dns_name(host.host)) return not_pinned(whole, "its host is neither an IP address nor a DNS name");
    }
    if (!port_text.empty()) {
        unsigned port = 0;
        const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535 ||
            port_text.front() == '0')
            return not_pinned(whole, "its port is not a number from 1 to 65535");
        host.port = static_cast<std::uint16_t>(port);
    }
    return host;
}

// Whether a reference's first component names a registry host (Docker's rule).
bool names_a_host(std::string_view first)
{
    return first.find_first_of(".:[") != std::string_view::npos || first == "localhost";
}

Expected<std::string> check_repository(std::string_view repository, std::string_view whole)
{
    if (repository.empty()) return not_pinned(whole, "it names no repository");
    if (repository.size() > k_max_repository_bytes)
        return not_pinned(whole, "its repository is longer than " + std::to_string(k_max_repository_bytes) + " bytes");
    std::size_t components = 0;
    std::size_t start = 0;
    while (start <= repository.size()) {
        const std::size_t end = std::min(repository.find('/', start), repository.size());
        if (!is_path_component(repository.substr(start, end - start)))
            return not_pinned(whole, "its repository has a path component outside [a-z0-9] runs joined by '.', '_' or '-'");
        if (++components > k_max_components)
            return not_pinned(whole, "its repository has more than " + std::to_string(k_max_components) + " path components");
        start = end + 1;
    }
    return std::string(repository);
}

}  // namespace

std::string RegistryHost::authority() const
{
    std::string text = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if (port) text += ":" + std::to_string(*port);
    return text;
}

std::string PinnedReference::text() const
{
    return (registry ? registry->authority() + "/" : std::string()) + repository + "@" + digest;
}

bool is_sha256_digest(std::string_view text)
{
    constexpr std::string_view k_prefix = "sha256:";
    if (text.size() != k_prefix.size() + 64 || !text.starts_with(k_prefix)) return false;
    for (const char c : text.substr(k_prefix.size())) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

Expected<RegistryAddress> parse_registry_address(std::string_view text)
{
    if (text.size() > k_max_reference_bytes)
        return not_pinned(text, "it is longer than " + std::to_string(k_max_reference_bytes) + " bytes");
    const auto slash = text.find('/');
    if (slash == std::string_view::npos) return not_pinned(text, "a registry is HOST[:PORT]/PREFIX, and it has no '/'");
    auto host = parse_host(text.substr(0, slash), text);
    if (!host) return host.error();
    auto prefix = check_repository(text.substr(slash + 1), text);
    if (!prefix) return prefix.error();
    return RegistryAddress{std::move(*host), std::move(*prefix)};
}

Expected<PinnedReference> parse_pinned_reference(std::string_view text)
{
    if (text.size() > k_max_reference_bytes)
        return not_pinned(text, "it is longer than " + std::to_string(k_max_reference_bytes) + " bytes");
    const auto at = text.rfind('@');
    if (at == std::string_view::npos) return not_pinned(text, "it names no digest (NAME@sha256:HEX); a tag is never used");
    PinnedReference reference;
    reference.digest = std::string(text.substr(at + 1));
    if (!is_sha256_digest(reference.digest))
        return not_pinned(text, "its digest is not sha256: and 64 lower-case hex digits");
    std::string_view name = text.substr(0, at);
    const auto slash = name.find('/');
    if (slash != std::string_view::npos && names_a_host(name.substr(0, slash))) {
        auto host = parse_host(name.substr(0, slash), text);
        if (!host) return host.error();
        reference.registry = std::move(*host);
        name.remove_prefix(slash + 1);
    }
    // A tag before the digest ("name:tag@sha256:...") is refused: the component check sees ':'.
    auto repository = check_repository(name, text);
    if (!repository) return repository.error();
    reference.repository = std::move(*repository);
    return reference;
}

Expected<PinnedReference> reference_in(const RegistryAddress& address, std::string_view name, std::string_view digest)
{
    return parse_pinned_reference(address.host.authority() + "/" + address.prefix + "/" + std::string(name) + "@" +
                                  std::string(digest));
}

}  // namespace pybox::registry
