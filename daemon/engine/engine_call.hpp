// What every call to an engine shares, whatever its backend (box_engine.hpp, engine_probe.hpp,
// engine_client.hpp): its time budget, applied to the whole exchange, and the Error codes it
// fails with:
//   "engine_unreachable"    the engine could not be reached (socket missing, refused)
//   "engine_timeout"        the exchange did not finish in time
//   "engine_protocol"       the engine's answer broke its protocol or a bound
//   "engine_no_such_object" the engine has no such object (HTTP 404)
//   "engine_error"          the engine refused the call (its words in the message)
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>

namespace pybox::engine {

namespace net = boost::asio;
using Timeout = std::chrono::milliseconds;

}  // namespace pybox::engine
