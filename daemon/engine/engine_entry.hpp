// The engines beside the local one, as config.json names them ("engines": [...], read by
// daemon/config/engines_section.hpp).
//
// Each entry is one JSON object: {"id": ID, "kind": KIND, ...}. The kind names the backend that
// drives the engine (daemon/engine/backend_factory.hpp makes it):
// - "docker" (the default): a Docker engine, by its "url":
//   - "unix:///abs/path/docker.sock": another engine on this host, by its socket.
//   - "ssh://user@host[:port]": an engine on another host, reached over one libssh2 session.
//     Needs "engine_socket" (the engine's socket on that host, absolute, of [A-Za-z0-9/._@+-]),
//     "identity_file" (the private key, absolute path on this host) and exactly one pinned host
//     key: "known_hosts" (a known_hosts file, absolute) or "host_key" ("SHA256:" + the unpadded
//     base64 of the key's SHA-256, as `ssh-keygen -lf` prints it). Nothing is taken from ~/.ssh
//     or an agent.
// - "kubernetes": a cluster, each program a Pod (issue 30). Needs "kubeconfig" (absolute path on
//   this host), "namespace" (a DNS-1123 label) and "image_registry" ("HOST[:PORT]/PREFIX", where
//   the recorded images are pushed; checked by daemon/registry/pinned_reference.hpp's grammar
//   when config.json is read); optional "context" (else the kubeconfig's current-context),
//   "max_runs" (programs at once, 1-64, default 8) and "pids_limit": "node" (accept a node whose
//   podPidsLimit is above the seed's figure, and say the node's in the receipt). The kubeconfig
//   is not read here: the backend reads it, and a bad one is a `vm status` problem of that
//   engine, not a config error.
// The keys of one kind are refused in an entry of the other. An id is 1-32 of [a-z0-9-],
// starting with a letter or digit, unique, and not "local" (the local engine's). The rules of an
// ssh address, a fingerprint, an id and a namespace are here, pure, so they are unit-tested and
// fuzzed.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pybox::engine {

inline constexpr std::string_view k_local_engine_id = "local";
// How many engines config.json may name beside the local one.
inline constexpr std::size_t k_max_extra_engines = 8;

// Where an ssh engine is: ssh://user@host[:port].
struct SshAddress {
    std::string user;
    std::string host;  // a DNS name or an IPv4 address, or an IPv6 address without its brackets
    std::uint16_t port = 22;
    friend bool operator==(const SshAddress&, const SshAddress&) = default;
};

struct SshEngine {
    SshAddress address;
    std::filesystem::path engine_socket;  // on the remote host
    std::filesystem::path identity_file;  // on this host
    std::optional<std::filesystem::path> known_hosts;
    std::optional<std::string> host_key_sha256;  // "SHA256:<43 base64 characters>"
};

struct UnixSocketEngine {
    std::filesystem::path socket;
};

inline constexpr std::size_t k_default_cluster_runs = 8;
inline constexpr std::size_t k_max_cluster_runs = 64;

struct KubeEngine {
    std::filesystem::path kubeconfig;    // on this host; read by the backend, never at config time
    std::optional<std::string> context;  // none: the kubeconfig's current-context
    std::string namespace_name;          // a DNS-1123 label
    // "HOST[:PORT]/PREFIX", as written; it parses with registry::parse_registry_address (which
    // pybox_engine, below the registry code, does not link).
    std::string image_registry;
    std::size_t max_runs = k_default_cluster_runs;
    bool pids_limit_node = false;  // "pids_limit": "node"
    std::optional<std::string> node;  // the node every Pod is placed on; none: the cluster's scheduler places them
};

// The kinds of engine config.json may name.
enum class EngineKind { docker, kubernetes };

struct EngineEntry {
    std::string id;
    // A Docker engine's place (UnixSocketEngine, SshEngine) or a cluster's (KubeEngine); the
    // alternative always matches `kind`.
    std::variant<UnixSocketEngine, SshEngine, KubeEngine> where;
    EngineKind kind = EngineKind::docker;
};

// A kind's name in config.json, e.g. "docker".
std::string_view engine_kind_name(EngineKind kind);

// The kind config.json's "kind" names: "docker" (also when the key is absent) or "kubernetes";
// any other is "config_invalid" naming the kinds there are.
Expected<EngineKind> parse_engine_kind(std::string_view name);

// Parses "ssh://user@host[:port]" (no path, query or password); `why` says what is wrong.
Expected<SshAddress> parse_ssh_address(std::string_view url);

// Whether `text` is a pinned host key fingerprint: "SHA256:" and 43 unpadded base64 characters.
bool is_sha256_fingerprint(std::string_view text);

// Whether `id` is an engine id: 1-32 of [a-z0-9-], starting with a letter or digit.
bool is_engine_id(std::string_view id);

// Whether `name` is a DNS-1123 label, as Kubernetes requires of a namespace: 1-63 of [a-z0-9-],
// starting and ending with a letter or digit.
bool is_dns_label(std::string_view name);
// Whether `name` is a DNS-1123 subdomain, as Kubernetes checks most object names (a Pod's, a
// node's): 1-253 bytes of [a-z0-9-] parts, each starting and ending with a letter or digit,
// joined by '.' (Kubernetes does not hold the parts to a label's 63).
bool is_dns_subdomain(std::string_view name);

// Whether `name` may be a kubeconfig context's name in config.json: 1-253 visible ASCII
// characters (no spaces or control characters, so that it prints as it is).
bool is_context_name(std::string_view name);

// For messages and receipts: "unix:///path", "ssh://user@host:port" or
// "kubernetes:NAMESPACE@CONTEXT" (CONTEXT "current-context" when the entry names none); never a
// key, a token or the path of one.
std::string describe_engine_entry(const EngineEntry& entry);

}  // namespace pybox::engine
