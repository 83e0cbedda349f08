#include "daemon/kube/kubeconfig.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "daemon/kube/kube_limits.hpp"
#include "util/text.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cctype>
#include <charconv>
#include <span>
#include <utility>

namespace pybox::kube {

namespace {

namespace fs = std::filesystem;

// Where in the kubeconfig a value was found, for messages: "<file>: user \"admin\"".
struct Place {
    const fs::path& file;
    std::string what;
    std::string text() const { return file.string() + (what.empty() ? "" : ": " + what); }
};

Error kubeconfig_error(const Place& place, const std::string& problem)
{
    return make_error(api_error::k_kubeconfig_invalid, place.text() + ": " + problem);
}

// YAML::Node converts from anything, which hides result's converting constructor from Error.
Expected<YAML::Node> no_node(Error error) { return Expected<YAML::Node>(boost::system::in_place_error, std::move(error)); }

// The value under `key` of a map; an undefined node when absent; an error when the key is repeated.
Expected<YAML::Node> field(const YAML::Node& map, std::string_view key, const Place& place)
{
    // A default YAML::Node counts as defined; an absent key is an undefined (zombie) node.
    YAML::Node found = YAML::Node(YAML::NodeType::Map)["absent"];
    bool seen = false;
    for (const auto& entry : map) {
        if (!entry.first.IsScalar() || entry.first.Scalar() != key) continue;
        if (seen) return no_node(kubeconfig_error(place, "`" + std::string(key) + "` is given twice."));
        seen = true;
        found.reset(entry.second);
    }
    return found;
}

bool present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

// A string field: nullopt when absent or null; an error when it is not a scalar or is empty.
Expected<std::optional<std::string>> string_field(const YAML::Node& map, std::string_view key, const Place& place)
{
    auto node = field(map, key, place);
    if (!node) return node.error();
    if (!present(*node)) return std::optional<std::string>();
    if (!node->IsScalar() || node->Scalar().empty())
        return kubeconfig_error(place, "`" + std::string(key) + "` must be a non-empty string.");
    return std::optional<std::string>(node->Scalar());
}

Expected<std::string> required_string(const YAML::Node& map, std::string_view key, const Place& place)
{
    auto value = string_field(map, key, place);
    if (!value) return value.error();
    if (!*value) return kubeconfig_error(place, "`" + std::string(key) + "` is missing.");
    return **value;
}

// The entry named `name` of the list `list_key` ("clusters", "users", "contexts"): its `inner`
// map ("cluster", "user", "context").
Expected<YAML::Node> named_entry(const YAML::Node& root, const fs::path& file, std::string_view list_key,
                                 std::string_view inner, const std::string& name, std::string_view referred_by)
{
    const Place top{file, ""};
    auto list = field(root, list_key, top);
    if (!list) return no_node(list.error());
    YAML::Node found;
    bool seen = false;
    if (present(*list)) {
        if (!list->IsSequence()) return no_node(kubeconfig_error(top, "`" + std::string(list_key) + "` must be a list."));
        for (const auto& entry : *list) {
            if (!entry.IsMap())
                return no_node(kubeconfig_error(top, "each entry of `" + std::string(list_key) + "` must be a map."));
            auto entry_name = required_string(entry, "name", Place{file, "an entry of `" + std::string(list_key) + "`"});
            if (!entry_name) return no_node(entry_name.error());
            if (*entry_name != name) continue;
            if (seen)
                return no_node(kubeconfig_error(top, "`" + std::string(list_key) + "` names \"" + name + "\" twice."));
            auto body = field(entry, inner, Place{file, std::string(inner) + " \"" + name + "\""});
            if (!body) return no_node(body.error());
            if (!body->IsMap())
                return no_node(kubeconfig_error(Place{file, std::string(inner) + " \"" + name + "\""},
                                        "`" + std::string(inner) + "` must be a map."));
            seen = true;
            found.reset(*body);
        }
    }
    if (!seen)
        return no_node(kubeconfig_error(top, std::string(referred_by) + " names " + std::string(inner) + " \"" + name +
                                         "\", which `" + std::string(list_key) + "` does not hold."));
    return found;
}

fs::path resolved(const fs::path& file, const std::string& named)
{
    const fs::path path(named);
    return path.is_absolute() ? path : file.parent_path() / path;
}

// A credential given as a file (`file_key`) or inline base64 (`data_key`), never both; nullopt
// when neither is there.
Expected<std::optional<std::string>> file_or_data(const YAML::Node& map, std::string_view file_key,
                                                  std::string_view data_key, const Place& place)
{
    auto named = string_field(map, file_key, place);
    if (!named) return named.error();
    auto data = string_field(map, data_key, place);
    if (!data) return data.error();
    if (*named && *data)
        return kubeconfig_error(place, "both `" + std::string(file_key) + "` and `" + std::string(data_key) +
                                           "` are given; keep one.");
    if (*data) {
        auto decoded = util::base64_decode(**data);
        if (!decoded) return kubeconfig_error(place, "`" + std::string(data_key) + "` is not valid base64.");
        return std::optional<std::string>(std::move(*decoded));
    }
    if (*named) {
        const fs::path path = resolved(place.file, **named);
        auto content = read_regular_file_capped(path, k_max_credential_file_bytes, true);
        if (!content)
            return kubeconfig_error(place, "`" + std::string(file_key) + "` " + path.string() +
                                               " cannot be used: " + content.error().message);
        return std::optional<std::string>(std::move(*content));
    }
    return std::optional<std::string>();
}

// A key PyBox refuses wherever it is set, and why.
struct Refused {
    std::string_view key;
    std::string_view why;
};

Expected<void> refuse_present(const YAML::Node& map, const Place& place, std::span<const Refused> refused)
{
    for (const auto& [key, why] : refused) {
        auto node = field(map, key, place);
        if (!node) return node.error();
        if (present(*node)) return kubeconfig_error(place, "`" + std::string(key) + "` " + std::string(why));
    }
    return {};
}

Expected<void> refuse_skip_verify(const YAML::Node& cluster, const Place& place)
{
    auto node = field(cluster, "insecure-skip-tls-verify", place);
    if (!node) return node.error();
    if (!present(*node)) return {};
    bool skip = true;
    if (!node->IsScalar() || !YAML::convert<bool>::decode(*node, skip))
        return kubeconfig_error(place, "`insecure-skip-tls-verify` must be true or false.");
    if (skip)
        return kubeconfig_error(place, "`insecure-skip-tls-verify` is true: PyBox always verifies the apiserver's "
                                       "certificate; give the cluster's CA (`certificate-authority-data`).");
    return {};
}

Expected<void> read_cluster(const YAML::Node& cluster, const Place& place, KubeAccess& access)
{
    static constexpr std::array<Refused, 2> k_refused{{
        {"proxy-url", "is set: PyBox connects to the apiserver directly, never through a proxy."},
        {"tls-server-name", "is set: PyBox checks the apiserver's certificate against the server's own host."},
    }};
    if (auto ok = refuse_present(cluster, place, k_refused); !ok) return ok.error();
    if (auto ok = refuse_skip_verify(cluster, place); !ok) return ok.error();
    auto server = required_string(cluster, "server", place);
    if (!server) return server.error();
    auto parsed = parse_api_server(*server, place.text() + ": `server`");
    if (!parsed) return parsed.error();
    access.server = std::move(*parsed);
    auto ca = file_or_data(cluster, "certificate-authority", "certificate-authority-data", place);
    if (!ca) return ca.error();
    if (!*ca)
        return kubeconfig_error(place, "neither `certificate-authority` nor `certificate-authority-data` is given: "
                                       "PyBox verifies the apiserver against the cluster's own CA.");
    access.ca_pem = std::move(**ca);
    return {};
}

Expected<void> read_user(const YAML::Node& user, const Place& place, KubeAccess& access)
{
    static constexpr std::array<Refused, 8> k_refused{{
        {"exec", "(a credential plugin) is not supported: PyBox runs no program to get credentials; give the "
                 "user a client certificate or a token."},
        {"auth-provider", "(a credential plugin) is not supported: give the user a client certificate or a token."},
        {"username", "(basic authentication) is not supported: give the user a client certificate or a token."},
        {"password", "(basic authentication) is not supported: give the user a client certificate or a token."},
        {"as", "(impersonation) is not supported: give the user's own credentials."},
        {"as-uid", "(impersonation) is not supported: give the user's own credentials."},
        {"as-groups", "(impersonation) is not supported: give the user's own credentials."},
        {"as-user-extra", "(impersonation) is not supported: give the user's own credentials."},
    }};
    if (auto ok = refuse_present(user, place, k_refused); !ok) return ok.error();
    auto cert = file_or_data(user, "client-certificate", "client-certificate-data", place);
    if (!cert) return cert.error();
    auto key = file_or_data(user, "client-key", "client-key-data", place);
    if (!key) return key.error();
    auto token = string_field(user, "token", place);
    if (!token) return token.error();
    auto token_file = string_field(user, "tokenFile", place);
    if (!token_file) return token_file.error();
    if (*token && *token_file) return kubeconfig_error(place, "both `token` and `tokenFile` are given; keep one.");
    if (*token_file) {
        const fs::path path = resolved(place.file, **token_file);
        auto content = read_regular_file_capped(path, k_max_credential_file_bytes, true);
        if (!content)
            return kubeconfig_error(place, "`tokenFile` " + path.string() + " cannot be used: " + content.error().message);
        // kubectl takes the file's text without surrounding white space.
        const auto first = content->find_first_not_of(" \t\r\n");
        const auto last = content->find_last_not_of(" \t\r\n");
        if (first == std::string::npos) return kubeconfig_error(place, "`tokenFile` " + path.string() + " is empty.");
        token->emplace(content->substr(first, last - first + 1));
    }
    const bool has_cert = cert->has_value();
    const bool has_key = key->has_value();
    if (has_cert != has_key)
        return kubeconfig_error(place, has_cert ? "a client certificate is given without its key (`client-key` or "
                                                  "`client-key-data`)."
                                                : "a client key is given without its certificate "
                                                  "(`client-certificate` or `client-certificate-data`).");
    if (has_cert && *token)
        return kubeconfig_error(place, "both a client certificate and a token are given; keep one.");
    if (!has_cert && !*token)
        return kubeconfig_error(place, "no credentials: give `client-certificate` and `client-key` (or their "
                                       "`-data` forms), or `token` or `tokenFile`.");
    if (*token) {
        for (const char c : **token)
            if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
                return kubeconfig_error(place, "the token holds a character that cannot go in an HTTP header.");
        access.token = std::move(**token);
    } else {
        access.client_cert_pem = std::move(**cert);
        access.client_key_pem = std::move(**key);
    }
    return {};
}

Expected<KubeAccess> read_document(const YAML::Node& root, const fs::path& file, const std::optional<std::string>& context)
{
    const Place top{file, ""};
    if (!root.IsMap()) return kubeconfig_error(top, "it is not a kubeconfig (a YAML map).");
    auto kind = string_field(root, "kind", top);
    if (!kind) return kind.error();
    if (*kind && **kind != "Config") return kubeconfig_error(top, "`kind` is \"" + **kind + "\", not \"Config\".");
    KubeAccess access;
    if (context) {
        access.context = *context;
    } else {
        auto current = string_field(root, "current-context", top);
        if (!current) return current.error();
        if (!*current) return kubeconfig_error(top, "no context was given and `current-context` is not set.");
        access.context = **current;
    }
    auto context_map = named_entry(root, file, "contexts", "context", access.context,
                                   context ? "the engine entry" : "`current-context`");
    if (!context_map) return context_map.error();
    const Place context_place{file, "context \"" + access.context + "\""};
    auto cluster_name = required_string(*context_map, "cluster", context_place);
    if (!cluster_name) return cluster_name.error();
    auto user_name = required_string(*context_map, "user", context_place);
    if (!user_name) return user_name.error();
    auto namespace_name = string_field(*context_map, "namespace", context_place);
    if (!namespace_name) return namespace_name.error();
    access.cluster = *cluster_name;
    access.user = *user_name;
    access.namespace_name = *namespace_name;

    auto cluster = named_entry(root, file, "clusters", "cluster", access.cluster, context_place.what);
    if (!cluster) return cluster.error();
    if (auto ok = read_cluster(*cluster, Place{file, "cluster \"" + access.cluster + "\""}, access); !ok)
        return ok.error();
    auto user = named_entry(root, file, "users", "user", access.user, context_place.what);
    if (!user) return user.error();
    if (auto ok = read_user(*user, Place{file, "user \"" + access.user + "\""}, access); !ok) return ok.error();
    return access;
}

}  // namespace

Expected<ApiServer> parse_api_server(std::string_view url, std::string_view field_name)
{
    const auto refuse = [&](const std::string& problem) {
        return make_error(api_error::k_kubeconfig_invalid, std::string(field_name) + " \"" + std::string(url) + "\" " + problem);
    };
    constexpr std::string_view k_scheme = "https://";
    if (url.substr(0, k_scheme.size()) != k_scheme)
        return refuse("is not an https:// URL: PyBox talks to the apiserver only over verified TLS.");
    ApiServer server;
    server.url = std::string(url);
    std::string_view rest = url.substr(k_scheme.size());
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        std::string_view path = rest.substr(slash);
        while (!path.empty() && path.back() == '/') path.remove_suffix(1);
        for (const char c : path)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~'))
                return refuse("has a path PyBox cannot use (letters, digits, '/', '-', '.', '_' and '~' only).");
        server.base_path = std::string(path);
    }
    if (authority.find('@') != std::string_view::npos) return refuse("holds user information, which PyBox does not send.");
    std::string_view port_text;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return refuse("has an unclosed '[' in its host.");
        server.host = std::string(authority.substr(1, close - 1));
        const auto after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return refuse("has text after its IPv6 address.");
            port_text = after.substr(1);
            if (port_text.empty()) return refuse("has an empty port.");
        }
    } else {
        const auto colon = authority.find(':');
        server.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port_text = authority.substr(colon + 1);
            if (port_text.empty()) return refuse("has an empty port.");
        }
    }
    if (server.host.empty()) return refuse("names no host.");
    for (const char c : server.host)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == ':'))
            return refuse("has a host PyBox cannot use.");
    if (!port_text.empty()) {
        unsigned port = 0;
        const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
            return refuse("has a port that is not a number from 1 to 65535.");
        server.port = static_cast<std::uint16_t>(port);
    }
    return server;
}

Expected<KubeAccess> parse_kubeconfig(std::string_view text, const fs::path& file, const std::optional<std::string>& context)
{
    if (text.size() > k_max_kubeconfig_bytes)
        return kubeconfig_error(Place{file, ""}, "it is larger than " + std::to_string(k_max_kubeconfig_bytes) + " bytes.");
    try {
        const YAML::Node root = YAML::Load(std::string(text));
        return read_document(root, file, context);
    } catch (const YAML::Exception& e) {
        return kubeconfig_error(Place{file, ""}, "it is not valid YAML: " + std::string(e.what()));
    }
}

Expected<KubeAccess> read_kubeconfig(const fs::path& file, const std::optional<std::string>& context)
{
    auto text = read_regular_file_capped(file, k_max_kubeconfig_bytes, true);
    if (!text) return make_error(api_error::k_kubeconfig_invalid, "The kubeconfig " + file.string() + " cannot be read: " +
                                                           text.error().message);
    return parse_kubeconfig(*text, file, context);
}

}  // namespace pybox::kube
