// A client of one Kubernetes apiserver over HTTPS (Boost.Beast over Asio's OpenSSL stream), as a
// kubeconfig's context describes it (kubeconfig.hpp).
//
// TLS: TLS 1.2 at least; the apiserver's certificate chain must verify against the kubeconfig's
// CA alone (never the system's store) and must name the server's host (a DNS name, or the IP
// address for an IP host); SNI names the host unless it is an IP address. The user is the
// kubeconfig's: its client certificate and key in the handshake, or its bearer token in an
// Authorization header (only ever sent over that verified TLS).
//
// Requests: every one carries User-Agent "pybox/<version>" and Accept application/json, and no
// path PyBox builds asks for ?pretty (this apiserver 1.20 panics writing pretty JSON:
// ../shared/k8s/README.md). Each call opens a fresh connection ("Connection: close"): resolving,
// connecting and the handshake within k_connect_timeout, the whole call within its timeout. An
// answer's header is at most Beast's 8 KiB, its body at most limits::k_max_engine_response_bytes
// unless the call names another bound (the kubelet's summary of a node: kube_limits.hpp).
//
// Failures (Error codes of common/api_errors.def and unanswered_errors.def, as the engine's):
// "engine_unreachable" (no address, refused, reset), "engine_timeout" (the timeout passed),
// "kube_tls" (the certificate does not verify or is not for the host, or the handshake failed),
// "engine_protocol" (malformed HTTP, an answer over the cap, a 2xx body that is not the JSON
// asked for), "cancelled" (the caller's cancellation); an answer that is not 2xx is a value of
// call() and becomes an Error of kube_status.hpp in call_json().
//
// A streaming GET (get_lines(), for a watch) reads the answer's header within its open timeout
// and its body by its own deadline, as the apiserver writes it, a line at a time: each line at
// most the bound it was opened with, and nothing of the body kept but the line being read.
//
// Thread-safety and lifetime: the client holds the access and the TLS context and nothing else;
// calls may overlap. Its coroutines run on the executor of the coroutine that awaits them (the
// caller's). The client must outlive its calls; connections it made (connect()) do not need it.
#pragma once

#include "common/error.hpp"
#include "common/limits.hpp"
#include "daemon/kube/kubeconfig.hpp"
#include "util/bounded_lines.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pybox::kube {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

// A call's whole budget; the same unit as the engine's Timeout.
using Timeout = std::chrono::milliseconds;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// An answer of any status.
struct KubeReply {
    std::string what;  // "GET /version", for messages
    unsigned status = 0;
    std::string body;
};

// The request `method` `path` with the headers every call carries (Host, User-Agent, Accept,
// Authorization for a token, Content-Type for a body); `path` goes after the server's base path.
http::request<http::string_body> make_kube_request(const KubeAccess& access, http::verb method, std::string_view path,
                                                   const json::value* body);

// The Host header for `server`: "host", "host:port", "[v6]:port".
std::string host_header(const ApiServer& server);

// "pybox/<version>".
const std::string& kube_user_agent();

// The body of a 2xx answer to a streaming GET, read a line at a time as it comes; owns its
// connection (it ends with it). One next_line() at a time, on the executor that opened it.
class KubeLineStream {
public:
    // The next line, without its "\n"; nullopt once the answer ended after a whole line.
    // Errors: "engine_protocol" (a line longer than the bound, an answer that ends inside a line,
    // malformed HTTP), "engine_timeout" (the stream's deadline passed), "engine_unreachable"
    // (the connection broke), "cancelled" (cancel()). After an Error the stream is unusable.
    net::awaitable<Expected<std::optional<std::string>>> next_line();
    // A pending next_line() completes "cancelled" (from the stream's executor).
    void cancel();

private:
    friend class KubeClient;
    KubeLineStream(std::string what, TlsStream stream, beast::flat_buffer buffer,
                   http::response_parser<http::empty_body>&& header, std::size_t max_line_bytes);

    std::string m_what;
    TlsStream m_stream;
    beast::flat_buffer m_buffer;
    http::response_parser<http::buffer_body> m_parser;
    util::BoundedLines m_lines;
    std::size_t m_max_line_bytes;
    std::vector<char> m_piece;  // where the body's next bytes are read
};

// What a streaming GET was answered: a 2xx answer's body as lines, or another answer whole.
using StreamedAnswer = std::variant<std::unique_ptr<KubeLineStream>, KubeReply>;

class KubeClient {
public:
    // Loads the kubeconfig's CA, and its client certificate and key when given, into a TLS
    // context; "kubeconfig_invalid" when one cannot be loaded or the key is not the certificate's.
    static Expected<std::unique_ptr<KubeClient>> make(KubeAccess access);

    const KubeAccess& access() const { return m_access; }

    // One request and its whole answer, any status; its body at most `body_limit` bytes.
    net::awaitable<Expected<KubeReply>> call(http::verb method, std::string path, const json::value* body,
                                             Timeout timeout,
                                             std::size_t body_limit = limits::k_max_engine_response_bytes);
    // The same; a 2xx answer must be a JSON object, which is returned (as a value); otherwise the Error.
    net::awaitable<Expected<json::value>> call_json(http::verb method, std::string path, const json::value* body,
                                                     Timeout timeout);

    // GET `path`, its answer read as it comes: connecting and the answer's header within
    // `open_timeout`, the rest by `deadline`. A 2xx answer's body is lines of at most
    // `max_line_bytes`; any other answer is read whole (as call() reads it).
    net::awaitable<Expected<StreamedAnswer>> get_lines(std::string path, Timeout open_timeout,
                                                       std::chrono::steady_clock::time_point deadline,
                                                       std::size_t max_line_bytes);

    // A connection to the apiserver, verified and handshaken, by `deadline` (and at most
    // k_connect_timeout); its timer is left at `deadline`. For the attach websocket.
    net::awaitable<Expected<TlsStream>> connect(std::chrono::steady_clock::time_point deadline);

    // "GET /api/v1/..." for messages.
    static std::string describe(http::verb method, std::string_view path);

private:
    KubeClient(KubeAccess access, std::unique_ptr<net::ssl::context> context);

    KubeAccess m_access;
    std::unique_ptr<net::ssl::context> m_context;
};

}  // namespace pybox::kube
