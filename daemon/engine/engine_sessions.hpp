// Engine sessions, internal to daemon/engine: the WaitHandle and AttachSession that
// EngineClient::begin_wait() and EngineClient::attach() hand out, built on a connection whose
// response header has already been read (engine_http.hpp).
//
// Each session owns its connection and runs on that connection's executor; it is not
// thread-safe. Failures follow engine_client.hpp's codes, plus "cancelled" once cancel() was
// called.
#pragma once

#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/engine_http.hpp"

#include <memory>
#include <string>

namespace pybox::engine::detail {

// `what` names the request in messages, e.g. "POST /v1.41/containers/<id>/wait?condition=next-exit".
std::unique_ptr<WaitHandle> make_wait_handle(std::string what, OpenedStream opened);
// `pending` holds the stream bytes that arrived together with the response header.
std::unique_ptr<AttachSession> make_attach_session(std::string what, Stream socket, std::string pending);

}  // namespace pybox::engine::detail
