// The pure rules of the ssh engine transport (ssh_session.hpp): how a host key fingerprint is
// written, how a remote command line is quoted, when a dropped session is tried again, how a
// known_hosts file names a host, and which identity files are offered. No I/O; unit-tested.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::engine {

// "SHA256:" + the unpadded base64 of a 32-byte SHA-256 digest, as `ssh-keygen -lf` prints it.
std::string format_sha256_fingerprint(std::string_view digest);

// One word for a POSIX shell: the text in single quotes, each ' written as '\''. Any bytes are
// safe (the remote shell sees them as one literal argument), including an empty string.
std::string shell_quote(std::string_view word);

// The words joined with spaces, each shell_quote()d: the command line of an exec channel, which
// the remote user's login shell parses.
std::string shell_command(const std::vector<std::string>& argv);

// Whether a remote socket path can be handed to socat as it is: only [A-Za-z0-9/._@+-] (socat's
// address syntax gives ',', ':', '!' and others a meaning). Checked when config.json is read.
bool is_plain_remote_path(std::string_view path);

// The exec command that carries one Engine API connection: socat between the channel and the
// engine's unix socket (is_plain_remote_path), waiting up to an hour for one direction after the other ended (a
// half-closed attach stream keeps its output flowing).
std::string engine_stream_command(std::string_view engine_socket);

// How long to wait before connecting again after `failures` failed attempts in a row (1 or
// more): `first`, doubling each time, at most `most`.
std::chrono::milliseconds reconnect_delay(int failures, std::chrono::milliseconds first,
                                          std::chrono::milliseconds most);

// The name a known_hosts file (and ssh-keyscan) uses for a host: "host" on port 22,
// "[host]:port" on any other.
std::string known_hosts_name(std::string_view host, unsigned port);

// Why an identity file must not be offered, or "" when it may: it must be a regular file that
// neither group nor others can read or write (as ssh requires of private keys). `mode` holds the
// permission bits (st_mode & 07777).
std::string identity_file_problem(bool regular_file, unsigned mode);

}  // namespace pybox::engine
