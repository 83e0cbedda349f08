// Where the model service is: config.json's model.base_url read into the endpoint a call goes
// to. Pure; unit-tested.
//
// The base is "https://host[:port][/path]" or, for a service on this machine only,
// "http://host[:port][/path]" with a loopback host ("localhost", 127.0.0.0/8, "::1"): over plain
// http the key and the program would cross the network readable and alterable by anyone on the
// path, and an altered answer is a program PyBox runs. (A service on another machine belongs
// behind TLS; model.ca_file makes a private CA work.) The connection checks again that every
// address "localhost" resolves to is a loopback one.
//
// The chat-completions path is the base's path plus "/v1/chat/completions", or plus
// "/chat/completions" when the base's path already ends in "/v1", so both the hosted NIM's
// "https://integrate.api.nvidia.com" and a self-hosted "http://localhost:8000/v1" work.
// A trailing "/" is ignored. User info ("user@"), a query, a fragment and percent-escapes are
// refused: the URL is named in messages and must never carry a secret.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace pybox::model {

inline constexpr std::string_view k_default_base_url = "https://integrate.api.nvidia.com";
inline constexpr std::size_t k_max_base_url_bytes = 2'048;

struct ModelEndpoint {
    bool tls = true;
    std::string host;  // a DNS name, an IPv4 address, or an IPv6 address without brackets
    std::uint16_t port = 443;
    std::string target;  // "/v1/chat/completions", or the base's path before it
    // "https://host:port/v1/chat/completions", for messages
    std::string describe() const;
    friend bool operator==(const ModelEndpoint&, const ModelEndpoint&) = default;
};

// The endpoint of a base URL; Error "config_invalid" with a sentence saying what is wrong
// (without `file` or key names: the caller adds them).
Expected<ModelEndpoint> parse_base_url(std::string_view url);

}  // namespace pybox::model
