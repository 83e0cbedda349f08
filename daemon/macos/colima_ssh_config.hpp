// How the daemon reaches the colima VM for the kernel watcher: the libssh2 transport of the ssh
// engines (daemon/engine/engine_entry.hpp's SshEngine), with the target read from
// `colima ssh-config --profile pybox`, or `colima ssh` (colima_profile.hpp) as the fallback.
//
// colima prints Lima's ssh config for the instance (Host colima-pybox; IdentityFile, User,
// Hostname, Port, and options for OpenSSH's client). It is parsed strictly: one Host block for
// colima-pybox, only the keys Lima writes, the key file Lima made under PyBox's own Lima home,
// a loopback Hostname, no agent or X11 forwarding, and nothing that runs a command (ProxyCommand,
// LocalCommand, Include, Match...: refused). Options meant for OpenSSH's client (ControlPath,
// Ciphers, StrictHostKeyChecking...) are read and ignored: libssh2 never reads them.
//
// The host key: Lima turns host key checking off (UserKnownHostsFile /dev/null), so there is no
// key to take from it. PyBox pins the VM's ed25519 host key the first time the profile starts
// (read through `colima ssh`, recorded in <runtime>/colima/pybox-host-key) and every libssh2
// session checks the key against that pin. A UserKnownHostsFile other than /dev/null is used
// as the pinned known_hosts instead.
//
// Pure; the parsers are fuzzed (tests/fuzz/colima_fuzz.cpp). Error code "colima_output_invalid".
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/macos/colima_profile.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::macos {

inline constexpr std::size_t k_max_ssh_config_bytes = 16 * 1024;
inline constexpr std::size_t k_max_ssh_config_lines = 64;

struct ColimaSshConfig {
    engine::SshAddress address;  // user@127.0.0.1:port
    std::filesystem::path identity_file;
    std::optional<std::filesystem::path> known_hosts;  // nullopt for /dev/null
};

Expected<ColimaSshConfig> parse_colima_ssh_config(std::string_view text, const ColimaLayout& layout);

// "SHA256:<43 base64>" of the key in an OpenSSH public key line "ssh-ed25519 AAAA... [comment]",
// as `ssh-keygen -lf` prints it.
Expected<std::string> host_key_fingerprint(std::string_view public_key_line);

// The pin file: one fingerprint and a newline.
std::string host_key_pin_text(std::string_view fingerprint);
Expected<std::string> parse_host_key_pin(std::string_view text);

// The SshEngine the libssh2 transport dials: the VM's Docker socket, Lima's key, and the pinned
// host key (the known_hosts of the config, else `pinned_fingerprint`; neither: "host_key_unpinned").
Expected<engine::SshEngine> colima_ssh_engine(const ColimaSshConfig& config,
                                              const std::optional<std::string>& pinned_fingerprint);

}  // namespace pybox::macos
