// Attaching to a Pod's container over a websocket (Boost.Beast over the apiserver's verified TLS,
// kube_client.hpp): stdin goes in, stdout and stderr come out apart as chunks, and the status
// channel's Status is kept for the end. The channel protocol is attach_channels.hpp's:
// "v5.channel.k8s.io" is offered first, then "v4.channel.k8s.io" (Kubernetes 1.20 picks v4);
// close_stdin() exists only when v5 was agreed.
//
// At most one write and one read at a time (a write may go while a read waits: the kill byte
// of a fed box, proto/box_policy.hpp): each is bounded by its own timeout (a write's leaves a
// waiting read's in place), and an operation that times out, fails or is cancelled (cancel())
// leaves the session unusable (a failed stream; the caller deletes the Pod). Messages are at most k_max_attach_message_bytes and the
// status at most k_max_attach_status_bytes; anything attach_channels.hpp refuses ends the
// session with "engine_protocol". Opening: "engine_*" and "kube_tls" as kube_client.hpp says, a
// refused upgrade as kube_status.hpp's Error (403: the user may not attach; 404: no such Pod;
// 400: the container is not running or has no stdin), and "engine_protocol" when the server
// agreed to no channel protocol PyBox offered.
//
// The session owns its connection and does not need the client once open. Its coroutines run
// on the executor of the coroutine that opened it.
#pragma once

#include "daemon/kube/attach_channels.hpp"
#include "daemon/kube/kube_client.hpp"

#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::kube {

class AttachSession {
public:
    // Attaches to `container` of Pod `pod` in `namespace_name`, with stdin, stdout and stderr.
    static net::awaitable<Expected<std::unique_ptr<AttachSession>>> open(KubeClient& client,
                                                                         std::string_view namespace_name,
                                                                         std::string_view pod,
                                                                         std::string_view container, Timeout timeout);

    AttachProtocol protocol() const { return m_protocol; }

    net::awaitable<Expected<void>> write_stdin(std::string_view bytes, Timeout timeout);
    // Closes stdin (v5 only); on v4 nothing is sent and the Error says v4 cannot.
    net::awaitable<Expected<void>> close_stdin(Timeout timeout);

    // The next chunk of output, or nullopt when the server ended the stream (the container's
    // process ended, or the server closed it). Channel-opening messages and status messages are
    // consumed on the way.
    net::awaitable<Expected<std::optional<OutputChunk>>> read(Timeout timeout);

    // Once read() returned nullopt: the status channel's Status, if the server sent one.
    // Success says nothing of the exit code (attach_channels.hpp).
    Expected<std::optional<AttachStatus>> status() const;

    // Stops every operation in progress: each completes with an error, and the session is unusable.
    void cancel();

    // A websocket close (normal), within `timeout`; errors are ignored: the session ends anyway.
    net::awaitable<void> close(Timeout timeout);

    using Stream = beast::websocket::stream<TlsStream>;
    AttachSession(Stream stream, AttachProtocol protocol, std::string what);

private:
    Stream m_stream;
    AttachProtocol m_protocol;
    std::string m_what;  // "attach to pod NS/NAME", for messages
    std::string m_status_bytes;
    bool m_ended = false;
    // While a read waits: its deadline, which a write puts back when it is done.
    std::optional<std::chrono::steady_clock::time_point> m_read_deadline;
};

}  // namespace pybox::kube
