// The EngineDialer of an ssh engine: every dial() opens an exec channel on the engine's
// SshSession running `socat STDIO UNIX-CONNECT:<engine socket>` (engine_stream_command) and
// returns the local end of the socketpair the session pumps to it, so EngineClient speaks
// HTTP to the remote engine exactly as to a local socket.
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
