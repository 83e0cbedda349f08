// HttpServer: the daemon's socket API, HTTP/1.1 + JSON on a unix socket (docs/api.md).
//
// Contract:
// - Constructed with the daemon's executor (one io_context, one thread), the socket path and
//   the daemon's services (services.hpp: DaemonServices); the server and the services
//   must outlive every coroutine it spawns: call stop() and let the io_context run out of work
//   before destroying them.
// - start() binds the socket. A socket file nobody answers on is stale and removed; if another
//   daemon answers on it, or the path is something other than a socket, start() refuses. The
//   socket is made 0600 (its folder is already 0700). Then it accepts in the background.
// - Socket activation: given options.activated_listener (a listening unix socket the service
//   manager passed, checked by socket_activation.hpp), the server owns that fd from start() on
//   and serves it instead: start() neither probes, removes nor binds socket_path (which then
//   only names the socket in messages), and stop() closes the fd but leaves the socket file,
//   which belongs to the service manager (it keeps listening and starts pyboxd again on the
//   next connection). Its mode and owner are the .socket unit's (SocketMode=, SocketGroup=).
// - Every connection: the peer must be admitted (callers.hpp: in owner mode its uid, SO_PEERCRED,
//   must equal ours; in system mode it is root or a member of the pybox group), else 403 and
//   close; the Caller goes with each of its requests to the router. Each
//   connection is its own coroutine; several clients are served at once, at most
//   max_connections. A connection is idle while no request has begun on it (from connecting,
//   or from its last answer, to the first byte of the next request); it is closed when it has
//   been idle for idle_timeout. When a connection arrives at the cap, the connection idle the
//   longest is closed to make room; when none is idle, the new one is answered 503
//   too_many_connections (with Retry-After) and closed, without reading its request.
// - Per request: a fresh RequestReader (request_reader.hpp: its bounds and what it refuses),
//   fed from the connection's buffer, which then never holds more than the header limit plus
//   one read of unparsed bytes. A body announced larger than the limit is refused with 413
//   before it is read; an oversized header, chunk-size line or trailer gets 431; a transfer
//   coding other than chunked 501; malformed HTTP 400; each is answered once and the
//   connection closed, so nothing desynchronises. The whole request must arrive within
//   request_read_timeout of its first byte, else the connection is closed without answer.
// - A bug never ends the daemon: a request whose handling throws (anything) is answered 500
//   internal_error, and whatever else a connection's coroutine throws (reading, parsing,
//   writing) ends that connection; both with a line on stderr.
// - While a request is handled the connection is watched: if the client disconnects (or
//   half-closes), the cancellation slot given to the service fires (a run then kills and
//   removes its box) and no response is written.
// - Responses are always application/json with a Content-Length, and a Retry-After when the
//   error says the daemon is full (busy, too_many_connections); keep-alive is honoured.
// - stop() may be called from any thread; on the executor it closes the acceptor, removes the
//   socket file (unless activated) and closes every connection (which cancels the requests in
//   progress).
#pragma once

#include "common/error.hpp"
#include "common/limits.hpp"
#include "daemon/server/callers.hpp"
#include "daemon/server/services.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

namespace pybox::daemon {

struct HttpServerOptions {
    std::chrono::milliseconds request_read_timeout = limits::k_request_read_timeout;
    std::chrono::milliseconds idle_timeout = limits::k_idle_connection_timeout;
    std::chrono::milliseconds response_write_timeout{10'000};
    std::size_t max_connections = limits::k_max_connections;
    ServeMode mode = ServeMode::owner;
    std::optional<std::uint32_t> socket_group;  // system mode: the pybox group's gid
    // The listening socket handed over by the service manager (socket activation), or nullopt
    // to bind socket_path.
    std::optional<int> activated_listener;
};

class HttpServer {
public:
    HttpServer(net::any_io_executor executor, std::filesystem::path socket_path, DaemonServices services,
               HttpServerOptions options = {});
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Fails with "daemon_already_running", "socket_path_occupied" or "socket_unusable" (the
    // last also when an activated listener cannot be taken over).
    Expected<void> start();
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace pybox::daemon
