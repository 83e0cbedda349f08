// Engine HTTP plumbing, internal to daemon/engine: one HTTP/1.1 exchange with the engine over
// a kept connection (kept_connections.hpp) or a fresh one from an EngineDialer, and the mapping
// of its failures to the Error codes documented in engine_client.hpp.
//
// Every exchange gets one deadline (now + timeout) armed on its TimedStream before the first
// write, and every response parser is bounded by limits::k_max_engine_response_bytes (Beast's
// default 8 KiB header limit applies). The dialer and the kept connections are borrowed for the
// call only. Coroutines run on the dialer's executor. Includes Beast: include it only from
// daemon/engine/*.cpp.
#pragma once

#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/kept_connections.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pybox::engine::detail {

namespace beast = boost::beast;
namespace http = beast::http;
using TimedStream = beast::basic_stream<net::local::stream_protocol, net::any_io_executor>;
using Clock = std::chrono::steady_clock;
using Response = http::response<http::string_body>;

inline constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
inline constexpr std::string_view k_host = "docker";
// Read and upload chunk size; memory per call, not a policy limit.
inline constexpr std::size_t k_chunk_bytes = 64 * 1024;

// An I/O failure of the exchange `what`: "engine_timeout" for an expired deadline,
// otherwise "engine_protocol" (a body over the cap says so).
Error io_error(const beast::error_code& ec, std::string_view what);
Error cancelled_error(std::string_view what);

// The parsed JSON, or null when `text` is empty or not JSON.
json::value parse_lenient(std::string_view text);

// A finished exchange: the status, the body parsed leniently and the raw text for messages.
struct Reply {
    std::string what;  // "GET /v1.41/info", for messages
    unsigned status = 0;
    json::value body;
    std::string text;
};

Reply make_reply(std::string what, Response&& response);
// A 2xx answer, else "engine_no_such_object" for a 404 or "engine_error", quoting the engine's "message".
Expected<void> require_success(const Reply& reply);
// A 2xx answer whose body is JSON of `kind`, else the matching error.
Expected<json::value> require_json(const Reply& reply, json::kind kind);

// "1.41" -> {1, 41}; nullopt for anything else.
std::optional<std::pair<unsigned, unsigned>> parse_api_version(std::string_view text);

http::request<http::string_body> make_request(http::verb method, const std::string& target);
void init_parser(http::response_parser<http::string_body>& parser);
std::string describe_request(http::verb method, std::string_view target);

// Dials and arms the stream with the exchange's deadline.
net::awaitable<Expected<TimedStream>> open_stream(EngineDialer& dialer, Clock::time_point deadline,
                                                  Timeout timeout);

// Where an exchange on a kept connection failed.
enum class FailedAt {
    write,  // before the request was written whole
    read,   // after it was written, before any byte of the answer arrived
};

// Whether an exchange that failed on a kept connection may be sent again on a fresh one: only
// when the engine certainly did not act on it. A request not written whole cannot have been
// processed; one written whole may have been, unless the method is idempotent (GET, HEAD, PUT,
// DELETE, OPTIONS) and the engine closed the connection before answering (it had closed the
// idle connection as the request went out). Never after a timeout.
bool may_send_again(FailedAt where, http::verb method, const beast::error_code& ec);

// One request (with an optional JSON body) and its whole response, within `timeout`, on a kept
// connection if there is one, else a fresh one; the connection is kept again when the dialer
// keeps connections and the answer allows it. A kept connection that fails as may_send_again() allows is replaced by a fresh one
// (once; the other kept ones are closed too). Any status is a value here.
net::awaitable<Expected<Response>> exchange_raw(EngineDialer& dialer, KeptConnections& kept, http::verb method,
                                                const std::string& target, const json::value* body, Timeout timeout);
net::awaitable<Expected<Reply>> exchange(EngineDialer& dialer, KeptConnections& kept, http::verb method,
                                         const std::string& target, const json::value* body, Timeout timeout);

// A connection whose response header has been read; the body (if any) is still to come.
struct OpenedStream {
    TimedStream stream;
    beast::flat_buffer buffer;
    std::unique_ptr<http::response_parser<http::string_body>> parser;
};

// Sends a bodiless request and reads the response header only; on a status outside
// `accepted` the (bounded) body is read too and the error returned.
net::awaitable<Expected<OpenedStream>> open_and_read_header(EngineDialer& dialer,
                                                            http::request<http::string_body> request,
                                                            const std::vector<unsigned>& accepted,
                                                            Timeout timeout);

}  // namespace pybox::engine::detail
