// ssh_connect: making and ending the one connection an SshSession holds (ssh_session.hpp), and
// the small libssh2 helpers both use. Internal to pybox_engine. Runs on the session thread and
// blocks it up to the deadline it is given; libssh2 runs non-blocking throughout.
//
// connect_ssh: TCP (each address of the host in turn, within the deadline), the ssh handshake,
// the host key checked against the pinned fingerprint or known_hosts file BEFORE anything is sent
// for authentication ("engine_host_key_refused", with the key seen and how to pin it), then
// public-key authentication with the identity file alone ("engine_auth_refused", also when the
// file is not a regular file private to its owner); anything else is "engine_unreachable".
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_entry.hpp"

#include <libssh2.h>

#include <chrono>
#include <string>
#include <sys/types.h>

namespace pybox::engine::detail {

using SshClock = std::chrono::steady_clock;

// A connected, authenticated session and its socket, owned by whoever holds it (close_ssh).
struct SshLink {
    LIBSSH2_SESSION* session = nullptr;
    int socket = -1;
    bool up() const { return session != nullptr; }
};

// libssh2's socket receive function (LIBSSH2_CALLBACK_RECV); its last argument points at the
// `abstract` given to connect_ssh.
using SshReceive = ssize_t (*)(libssh2_socket_t, void*, size_t, int, void**);

Expected<SshLink> connect_ssh(const SshEngine& engine, const std::string& describe, SshClock::time_point deadline,
                              unsigned keepalive_s, void* abstract, SshReceive receive);

// Ends the link: a goodbye first when `graceful` (at most 0.5 s), then the socket is shut (so
// nothing waits for the host) and the session freed.
void close_ssh(SshLink& link, bool graceful);

// Waits until the socket is ready for what libssh2 is blocked on; false at the deadline.
bool wait_ssh_socket(const SshLink& link, SshClock::time_point deadline);

// Calls `step` until it no longer answers EAGAIN; LIBSSH2_ERROR_TIMEOUT at the deadline.
template <class Step>
int ssh_until_done(const SshLink& link, SshClock::time_point deadline, Step step)
{
    for (;;) {
        const int rc = step();
        if (rc != LIBSSH2_ERROR_EAGAIN) return rc;
        if (!wait_ssh_socket(link, deadline)) return LIBSSH2_ERROR_TIMEOUT;
    }
}

// libssh2's last error text for the session.
std::string last_ssh_error(LIBSSH2_SESSION* session);

// Errors that mean the connection itself is broken, not only one channel.
bool is_session_error(int rc);

void close_fd(int& fd);

}  // namespace pybox::engine::detail
