#include "daemon/config/engines_section.hpp"

#include "common/api_error_codes.hpp"
#include "common/posix.hpp"
#include "daemon/config/config_keys.hpp"
#include "daemon/config/config_values.hpp"
#include "daemon/engine/ssh_rules.hpp"
#include "daemon/registry/pinned_reference.hpp"
#include "util/path_value.hpp"

#include <boost/json/object.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::config {

namespace json = boost::json;

using engine::EngineEntry, engine::EngineKind, engine::KubeEngine, engine::SshEngine, engine::UnixSocketEngine;

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

// The keys only a kubernetes entry has; the others beside "id" and "kind" are a docker entry's.
constexpr std::array<std::string_view, 7> k_kube_keys{"kubeconfig", "context",  "namespace", "image_registry",
                                                      "max_runs",   "pids_limit", "node"};

bool is_kube_key(std::string_view key)
{
    return std::find(k_kube_keys.begin(), k_kube_keys.end(), key) != k_kube_keys.end();
}

// Refuses the keys of the other kind in an entry of `kind`, naming them.
Expected<void> refuse_other_kinds_keys(const json::object& object, EngineKind kind, const std::filesystem::path& file,
                                       std::size_t index)
{
    std::vector<std::string> foreign;
    for (const auto& [key, ignored] : object) {
        if (key == "id" || key == "kind") continue;
        if (is_kube_key(key) != (kind == EngineKind::kubernetes)) foreign.push_back("\"" + std::string(key) + "\"");
    }
    if (foreign.empty()) return {};
    std::string named;
    for (std::size_t i = 0; i < foreign.size(); ++i)
        named += (i == 0 ? "" : i + 1 == foreign.size() ? " and " : ", ") + foreign[i];
    const bool cluster = kind == EngineKind::kubernetes;
    const std::string_view said = cluster || object.contains("kind") ? "" : " (no \"kind\" says otherwise)";
    return invalid_entry(file, index,
                         std::string("is a ") + (cluster ? "kubernetes" : "docker") + " engine" + std::string(said) + ", and " +
                             named + (foreign.size() == 1 ? " belongs" : " belong") + " to " +
                             (cluster ? "docker" : "kubernetes") + " engines");
}

Expected<EngineEntry> parse_docker_entry(const json::object& object, EngineEntry entry, const std::filesystem::path& file,
                                         std::size_t index)
{
    const auto* url = object.if_contains("url");
    if (url == nullptr || !url->is_string()) return invalid_entry(file, index, "needs a \"url\" string (unix:///... or ssh://...)");
    const std::string_view url_text = url->get_string();
    const bool has_ssh_keys = object.contains("engine_socket") || object.contains("identity_file") ||
                              object.contains("known_hosts") || object.contains("host_key");

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
    const auto* engine_socket = object.if_contains("engine_socket");
    const auto* identity_file = object.if_contains("identity_file");
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

    const auto* known_hosts = object.if_contains("known_hosts");
    const auto* host_key = object.if_contains("host_key");
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

// The kubeconfig's path only: the backend reads the file.
Expected<EngineEntry> parse_kube_entry(const json::object& object, EngineEntry entry, const std::filesystem::path& file,
                                       std::size_t index)
{
    KubeEngine cluster;
    const auto* kubeconfig = object.if_contains("kubeconfig");
    if (kubeconfig == nullptr) return invalid_entry(file, index, "needs \"kubeconfig\", the cluster's kubeconfig on this host");
    auto kubeconfig_path = absolute_path(*kubeconfig, "kubeconfig", k_max_path_bytes, file, index);
    if (!kubeconfig_path) return kubeconfig_path.error();
    cluster.kubeconfig = std::move(*kubeconfig_path);

    if (const auto* context = object.if_contains("context")) {
        if (!context->is_string() || !engine::is_context_name(context->get_string()))
            return invalid_entry(file, index, "has a \"context\" that is not 1-253 visible ASCII characters");
        cluster.context = std::string(context->get_string());
    }

    const auto* namespace_name = object.if_contains("namespace");
    if (namespace_name == nullptr) return invalid_entry(file, index, "needs \"namespace\", the namespace its Pods are made in");
    if (!namespace_name->is_string() || !engine::is_dns_label(namespace_name->get_string()))
        return invalid_entry(file, index, "has a \"namespace\" that is not a DNS-1123 label (1-63 of a-z, 0-9 and '-', "
                                          "starting and ending with a letter or digit)");
    cluster.namespace_name = std::string(namespace_name->get_string());

    const auto* image_registry = object.if_contains("image_registry");
    if (image_registry == nullptr)
        return invalid_entry(file, index, "needs \"image_registry\", the HOST[:PORT]/PREFIX its images are pushed to");
    if (!image_registry->is_string()) return invalid_entry(file, index, "has an \"image_registry\" that is not a string");
    auto address = registry::parse_registry_address(image_registry->get_string());
    if (!address) {
        std::string why = address.error().message;
        if (why.ends_with('.')) why.pop_back();
        return invalid_entry(file, index, "has an \"image_registry\" that is not HOST[:PORT]/PREFIX: " + why);
    }
    cluster.image_registry = std::string(image_registry->get_string());

    if (const auto* max_runs = object.if_contains("max_runs")) {
        if (!max_runs->is_int64() || max_runs->get_int64() < 1 ||
            max_runs->get_int64() > static_cast<std::int64_t>(engine::k_max_cluster_runs))
            return invalid_entry(file, index, "key \"max_runs\" must be a whole number from 1 to " +
                                                  std::to_string(engine::k_max_cluster_runs));
        cluster.max_runs = static_cast<std::size_t>(max_runs->get_int64());
    }

    if (const auto* pids_limit = object.if_contains("pids_limit")) {
        if (!pids_limit->is_string() || pids_limit->get_string() != "node")
            return invalid_entry(file, index, "has a \"pids_limit\" other than \"node\", its only value");
        cluster.pids_limit_node = true;
    }

    if (const auto* node = object.if_contains("node")) {
        if (!node->is_string() || !engine::is_dns_subdomain(node->get_string()))
            return invalid_entry(file, index, "has a \"node\" that is not a node name (a DNS-1123 subdomain: 1-253 of "
                                              "a-z, 0-9, '-' and '.')");
        cluster.node = std::string(node->get_string());
    }
    entry.where = std::move(cluster);
    return entry;
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
    if (auto mixed = refuse_other_kinds_keys(*object, entry.kind, file, index); !mixed) return mixed.error();
    switch (entry.kind) {
    case EngineKind::docker: return parse_docker_entry(*object, std::move(entry), file, index);
    case EngineKind::kubernetes: return parse_kube_entry(*object, std::move(entry), file, index);
    }
    return invalid_entry(file, index, "has a kind this reader does not know");
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
