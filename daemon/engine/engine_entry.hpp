// The engines beside the local one, as config.json names them ("engines": [...], read by
// daemon/config/engines_section.hpp).
//
// Each entry is one JSON object: {"id": ID, "kind": KIND, ...}. The kind names the backend that
// drives the engine (daemon/engine/backend_factory.hpp makes it); "docker", the default, is the
// only one this build has:
// - "docker": a Docker engine, by its "url":
//   - "unix:///abs/path/docker.sock": another engine on this host, by its socket.
//   - "ssh://user@host[:port]": an engine on another host, reached over one libssh2 session.
//     Needs "engine_socket" (the engine's socket on that host, absolute, of [A-Za-z0-9/._@+-]),
//     "identity_file" (the private key, absolute path on this host) and exactly one pinned host
//     key: "known_hosts" (a known_hosts file, absolute) or "host_key" ("SHA256:" + the unpadded
//     base64 of the key's SHA-256, as `ssh-keygen -lf` prints it). Nothing is taken from ~/.ssh
//     or an agent.
// - "kubernetes" is named but refused: its backend is not in this build (issue 30).
// An id is 1-32 of [a-z0-9-], starting with a letter or digit, unique, and not "local" (the
// local engine's id). The rules of an ssh address, a fingerprint and an id are here, pure, so
// they are unit-tested and fuzzed.
#pragma once

#include "common/error.hpp"

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

// The kinds of engine this build has a backend for.
enum class EngineKind { docker };

struct EngineEntry {
    std::string id;
    std::variant<UnixSocketEngine, SshEngine> where;  // a Docker engine's place
    EngineKind kind = EngineKind::docker;
};

// A kind's name in config.json, e.g. "docker".
std::string_view engine_kind_name(EngineKind kind);

// The kind config.json's "kind" names: "docker" (also when the key is absent); a kind this
// build does not have ("kubernetes" among them) is "config_invalid" naming the kinds it has.
Expected<EngineKind> parse_engine_kind(std::string_view name);

// Parses "ssh://user@host[:port]" (no path, query or password); `why` says what is wrong.
Expected<SshAddress> parse_ssh_address(std::string_view url);

// Whether `text` is a pinned host key fingerprint: "SHA256:" and 43 unpadded base64 characters.
bool is_sha256_fingerprint(std::string_view text);

// Whether `id` is an engine id: 1-32 of [a-z0-9-], starting with a letter or digit.
bool is_engine_id(std::string_view id);

// For messages and receipts: "unix:///path" or "ssh://user@host:port" (never a key or a path of one).
std::string describe_engine_entry(const EngineEntry& entry);

}  // namespace pybox::engine
