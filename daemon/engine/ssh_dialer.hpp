// The EngineDialer of an ssh engine: dial() returns the local end of the socketpair the engine's
// SshSession pumps to an exec channel running `socat -t 3600 STDIO 'UNIX-CONNECT:<engine socket>'`
// (engine_stream_command; libssh2 1.10 has no direct-streamlocal). It is the channel the session
// keeps open ahead of need for that command (SshSession::keep_warm, asked for here), or a new one
// (a few ms) when that one is taken. EngineClient speaks HTTP over it exactly as over a local
// socket and keeps it for its next plain call (keeps_connections()): nothing above the dialer
// knows the engine is remote, and what comes back is HTTP, read by Beast, so no new parser of
// remote bytes is needed.
//
// Ownership: shares the session (one per engine, held by the daemon; many dialers may share
// it). Executor: the returned streams and dial() itself run on `executor`. Failures are the
// session's: "engine_unreachable" (also while it waits to reconnect), "engine_timeout",
// "engine_host_key_refused", "engine_auth_refused".
#pragma once

#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/ssh_session.hpp"

#include <memory>

namespace pybox::engine {

std::unique_ptr<EngineDialer> make_ssh_dialer(net::any_io_executor executor, std::shared_ptr<SshSession> session);

}  // namespace pybox::engine
