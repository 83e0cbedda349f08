#include "daemon/model/model_url.hpp"

#include "common/api_error_codes.hpp"
#include "util/host_address.hpp"

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <charconv>

namespace pybox::model {

namespace {

Error bad_url(std::string_view why) { return make_error(api_error::k_config_invalid, std::string(why)); }

bool is_host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

bool is_path_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_' || c == '~' || c == '/';
}

}  // namespace

std::string ModelEndpoint::describe() const
{
    const std::string shown_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return std::string(tls ? "https://" : "http://") + shown_host + ":" + std::to_string(port) + target;
}

Expected<ModelEndpoint> parse_base_url(std::string_view url)
{
    if (url.size() > k_max_base_url_bytes)
        return bad_url("is longer than " + std::to_string(k_max_base_url_bytes) + " bytes");
    ModelEndpoint endpoint;
    std::string_view rest = url;
    if (rest.starts_with("https://")) {
        rest.remove_prefix(8);
    } else if (rest.starts_with("http://")) {
        endpoint.tls = false;
        endpoint.port = 80;
        rest.remove_prefix(7);
    } else {
        return bad_url("must start with https:// (or http:// for a service on this machine)");
    }
    const auto path_at = rest.find('/');
    std::string_view authority = rest.substr(0, path_at);
    std::string_view path = path_at == std::string_view::npos ? std::string_view() : rest.substr(path_at);
    if (authority.find('@') != std::string_view::npos)
        return bad_url("must not hold user information (\"user@\"); the key is configured apart");

    std::string_view port_text;
    if (authority.starts_with("[")) {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return bad_url("has an IPv6 address without its closing ']'");
        endpoint.host = std::string(authority.substr(1, close - 1));
        const auto after = authority.substr(close + 1);
        if (!after.empty() && !after.starts_with(":")) return bad_url("has bytes after its IPv6 address");
        if (!after.empty()) port_text = after.substr(1);
        boost::system::error_code ec;
        (void)boost::asio::ip::make_address_v6(endpoint.host, ec);
        if (ec) return bad_url("has a malformed IPv6 address");
    } else {
        const auto colon = authority.find(':');
        endpoint.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
        if (endpoint.host.empty() || endpoint.host.size() > 253 ||
            !std::all_of(endpoint.host.begin(), endpoint.host.end(), is_host_char) || endpoint.host.front() == '.' ||
            endpoint.host.front() == '-')
            return bad_url("must name a host: letters, digits, '.' and '-', or an IP address");
    }
    if (authority.find(':') != std::string_view::npos && !authority.starts_with("[") && port_text.empty())
        return bad_url("has an empty port");
    if (!port_text.empty()) {
        unsigned port = 0;
        const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
            return bad_url("has a port that is not a number from 1 to 65535");
        endpoint.port = static_cast<std::uint16_t>(port);
    }
    if (!std::all_of(path.begin(), path.end(), is_path_char))
        return bad_url("may hold only letters, digits and '.', '-', '_', '~', '/' in its path (no query, fragment or "
                       "percent-escapes)");
    while (path.ends_with("/")) path.remove_suffix(1);
    if (path.find("//") != std::string_view::npos || path.find("/./") != std::string_view::npos ||
        path.find("/../") != std::string_view::npos || path.ends_with("/.") || path.ends_with("/.."))
        return bad_url("has an empty, '.' or '..' part in its path");
    endpoint.target = std::string(path) + (path.ends_with("/v1") ? "/chat/completions" : "/v1/chat/completions");
    if (!endpoint.tls && !util::is_loopback_host(endpoint.host))
        return bad_url("may use http:// only for a service on this machine (localhost, 127.0.0.0/8, ::1): over the "
                       "network the key and the program must go over https://");
    return endpoint;
}

}  // namespace pybox::model
