// Reading a kubeconfig (the file kubectl reads) into what PyBox needs to reach one cluster: the
// apiserver's https URL, the CA that its certificate must verify against, and the user's
// credentials (a client certificate and key, or a bearer token), for one context.
//
// The YAML is parsed by yaml-cpp (Debian's libyaml-cpp), never by hand. The context is the one
// given, else `current-context`. Files the kubeconfig names (certificate-authority,
// client-certificate, client-key, tokenFile) are read at once, relative to the kubeconfig's own
// folder, each at most k_max_credential_file_bytes; the kubeconfig itself at most
// k_max_kubeconfig_bytes. PEM contents are not checked here: the TLS context that loads them
// (kube_client.hpp) says when one is not a certificate or key.
//
// Refused, each with an Error "kubeconfig_invalid" whose sentence names the file, the context,
// cluster or user, and the field: a credential plugin (`exec`, `auth-provider`),
// `insecure-skip-tls-verify: true`, a server that is not https://, a cluster without a CA, a
// user without credentials or with both a certificate and a token, a field given both as a file
// and as data, settings PyBox does not apply (impersonation, a proxy, tls-server-name, basic
// auth), an unknown context, cluster or user, and anything that is not a kubeconfig. Pure but
// for the file reads.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::kube {

// The apiserver's address, from a cluster's `server`.
struct ApiServer {
    std::string host;       // a DNS name or an IP address (IPv6 without brackets)
    std::uint16_t port = 443;
    std::string base_path;  // "" or "/prefix" (no trailing '/'), put before every API path
    std::string url;        // as the kubeconfig wrote it, for messages
    bool operator==(const ApiServer&) const = default;
};

// One context's cluster and user, ready to connect with.
struct KubeAccess {
    std::string context;
    std::string cluster;
    std::string user;
    std::optional<std::string> namespace_name;  // the context's namespace, when it names one
    ApiServer server;
    std::string ca_pem;           // the CA bundle the apiserver's certificate must verify against
    std::string client_cert_pem;  // with client_key_pem, or both empty when a token is used
    std::string client_key_pem;
    std::string token;            // a bearer token, or empty when a client certificate is used
};

// "https://HOST[:PORT][/PATH]"; an Error "kubeconfig_invalid" for anything else (`field` names
// where the text came from, for the message).
Expected<ApiServer> parse_api_server(std::string_view url, std::string_view field);

// `text` is the kubeconfig as read from `file` (named in messages; relative paths inside it are
// taken against its folder).
Expected<KubeAccess> parse_kubeconfig(std::string_view text, const std::filesystem::path& file,
                                      const std::optional<std::string>& context);

// Reads `file` (a regular file, symbolic links followed as kubectl does) and parses it.
Expected<KubeAccess> read_kubeconfig(const std::filesystem::path& file, const std::optional<std::string>& context);

}  // namespace pybox::kube
