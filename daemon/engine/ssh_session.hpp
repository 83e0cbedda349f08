// SshSession: the one libssh2 session the daemon holds to an ssh engine's host, shared by every
// Engine API connection to that engine (ssh_dialer.hpp), its watcher and its cgroup commands
// (daemon/watcher/ssh_cgroup_host.hpp). Each of those is an exec channel of this session.
//
// Thread: the session runs on a thread of its own, with libssh2 in non-blocking mode and one
// poll() over the ssh socket, a wake-up pipe and the session thread's end of every channel's
// socketpair. Callers on the daemon's io_context never block on it: open_stream() and
// ready() complete through the executor they are given, start_stream() returns at once. The
// session thread itself opens a channel (a few ms) and connects (up to connect_timeout, only
// while no channel is open) in line, so the other channels wait for that long.
//
// Connecting: on the first request (and after a drop), within `connect_timeout`: TCP, the ssh
// handshake, then the host key is checked against the pinned key BEFORE anything is sent for
// authentication (a different or unknown key: "engine_host_key_refused", naming the host, the
// SHA256 fingerprint seen and how to pin it); then public-key authentication with the configured
// identity file only ("engine_auth_refused"; also when the file is not a private regular file).
// Never an agent, a password, ~/.ssh/config or ~/.ssh/known_hosts.
//
// Failure: keep-alives every `keepalive_interval`; the session is dropped when a send or read on
// it fails, the host closes it, or (while channels are open) nothing arrives from the host for
// keepalive_interval * keepalive_missed. A drop ends every open channel at once (its local end is
// closed, so an EngineClient call in flight fails promptly). The next request reconnects at once;
// when that fails, requests fail fast ("engine_unreachable", or the refusal's own code) naming
// the host, the last error and when the next attempt is due, waiting reconnect_first, doubling
// up to reconnect_most (ssh_rules.hpp: reconnect_delay).
//
// Buffers: each channel holds at most k_ssh_channel_buffer bytes per direction here, and
// libssh2's channel window (2 MiB) behind it.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/command_channels.hpp"
#include "daemon/engine/engine_entry.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace pybox::engine {

namespace net = boost::asio;

inline constexpr std::size_t k_ssh_channel_buffer = 64 * 1024;

struct SshTimings {
    std::chrono::milliseconds connect_timeout{10'000};
    std::chrono::seconds keepalive_interval{10};
    int keepalive_missed = 3;
    std::chrono::milliseconds reconnect_first{1'000};
    std::chrono::milliseconds reconnect_most{30'000};
};

class SshSession final : public CommandChannels {
public:
    // Starts the session thread; nothing is connected until the first request.
    explicit SshSession(SshEngine engine, SshTimings timings = {});
    // Ends every channel, disconnects and joins the thread; pending requests fail.
    ~SshSession() override;
    SshSession(const SshSession&) = delete;
    SshSession& operator=(const SshSession&) = delete;

    // "ssh://user@host:port", for messages.
    std::string describe() const override;
    const SshEngine& engine() const;

    // Makes sure the session is up (connecting if needed), within `timeout`.
    net::awaitable<Expected<void>> ready(net::any_io_executor executor, std::chrono::milliseconds timeout);

    // Opens an exec channel running `command` (one shell command line: build it with
    // shell_command or engine_stream_command) and returns this end of a socketpair whose other
    // end the session thread pumps to the channel: bytes written go to the command's stdin, its
    // stdout comes back, its stderr is dropped. Half-closing this end sends EOF to the command;
    // the command's EOF half-closes it; closing it closes the channel. Within `timeout`.
    net::awaitable<Expected<net::local::stream_protocol::socket>> open_stream(net::any_io_executor executor,
                                                                             std::string command,
                                                                             std::chrono::milliseconds timeout) override;

    // The same without waiting: the socket is returned at once and the channel opened behind it;
    // when it cannot be opened (within `timeout`), the socket reaches its end with nothing read.
    Expected<net::local::stream_protocol::socket> start_stream(const net::any_io_executor& executor,
                                                               std::string command,
                                                               std::chrono::milliseconds timeout) override;

    // Keeps one channel running `command` open ahead of need while the session is up (replaced
    // every 60 s, and when its command ends), so that open_stream(command) hands it out at once
    // instead of opening a channel (a few ms) while the caller waits. The ssh dialer asks for it.
    void keep_warm(std::string command);

    // Why the session was last dropped ("the ssh session to ssh://... was dropped: <why>"), if it
    // ever was. A call whose connection ended with a drop fails in EngineClient as a broken answer
    // ("engine_protocol", "partial message"); this says why, for the run's receipt and messages.
    std::optional<std::string> last_drop() const override;

    // How many times the session was established (for tests and benchmarks).
    int connects() const;
    // How many exec channels were opened, spares included (for tests and benchmarks).
    int channels_opened() const;

private:
    class Impl;
    std::shared_ptr<Impl> m_impl;
};

}  // namespace pybox::engine
