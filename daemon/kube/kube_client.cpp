#include "daemon/kube/kube_client.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "common/version.hpp"
#include "daemon/kube/kube_limits.hpp"
#include "daemon/kube/kube_status.hpp"
#include "util/host_address.hpp"
#include "util/strict_json.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <utility>
#include <variant>

namespace pybox::kube {

namespace {

using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
namespace ssl = net::ssl;

constexpr auto as_tuple_awaitable = net::as_tuple(net::use_awaitable);
// API answers are nested a few levels; this leaves room for any object PyBox reads.
constexpr std::size_t k_answer_depth = 64;
// How much of a streamed body one read takes at most.
constexpr std::size_t k_line_read_bytes = 16 * 1024;

bool expired(const beast::error_code& ec) { return ec == beast::error::timeout || ec == net::error::timed_out; }

std::string where(const KubeAccess& access) { return "the apiserver at " + access.server.url; }

// What the certificate check saw, for the message when the handshake fails.
struct PeerCheck {
    std::string chain_problem;
    bool name_mismatch = false;
};

Error handshake_error(const beast::error_code& ec, const PeerCheck& check, const KubeAccess& access)
{
    if (ec == net::error::operation_aborted) return make_error(api_error::k_cancelled, "Connecting to " + where(access) + " was cancelled.");
    if (expired(ec)) return make_error(api_error::k_engine_timeout, "The TLS handshake with " + where(access) + " did not finish in time.");
    if (!check.chain_problem.empty())
        return make_error(api_error::k_kube_tls, "The certificate of " + where(access) +
                                                   " does not verify against the CA of cluster \"" + access.cluster +
                                                   "\" in the kubeconfig: " + check.chain_problem + ".");
    if (check.name_mismatch)
        return make_error(api_error::k_kube_tls, "The certificate of " + where(access) + " is not for the host " +
                                                   access.server.host + ".");
    return make_error(api_error::k_kube_tls, "The TLS handshake with " + where(access) + " failed: " + ec.message() + ".");
}

Error exchange_error(const beast::error_code& ec, const std::string& what, std::size_t body_limit)
{
    if (ec == net::error::operation_aborted) return make_error(api_error::k_cancelled, what + ": cancelled.");
    if (expired(ec)) return make_error(api_error::k_engine_timeout, what + ": the apiserver did not answer in time.");
    if (ec == http::error::body_limit)
        return make_error(api_error::k_engine_protocol, what + ": the apiserver's answer is larger than " +
                                                         std::to_string(body_limit) + " bytes.");
    if (ec == http::error::header_limit)
        return make_error(api_error::k_engine_protocol, what + ": the apiserver's answer header is too large.");
    if (ec.category() == beast::error_code(http::error::bad_version).category())
        return make_error(api_error::k_engine_protocol, what + ": the apiserver's answer is not valid HTTP: " + ec.message() + ".");
    return make_error(api_error::k_engine_unreachable, what + ": the connection to the apiserver failed: " + ec.message() + ".");
}

}  // namespace

std::string host_header(const ApiServer& server)
{
    const std::string host = server.host.find(':') != std::string::npos ? "[" + server.host + "]" : server.host;
    return server.port == 443 ? host : host + ":" + std::to_string(server.port);
}

const std::string& kube_user_agent()
{
    static const std::string agent = "pybox/" + std::string(version_number());
    return agent;
}

http::request<http::string_body> make_kube_request(const KubeAccess& access, http::verb method, std::string_view path,
                                                   const json::value* body)
{
    http::request<http::string_body> request{method, access.server.base_path + std::string(path), 11};
    request.set(http::field::host, host_header(access.server));
    // Never a curl, Wget or browser agent: this apiserver answers those with pretty JSON.
    request.set(http::field::user_agent, kube_user_agent());
    request.set(http::field::accept, "application/json");
    request.set(http::field::connection, "close");
    if (!access.token.empty()) request.set(http::field::authorization, "Bearer " + access.token);
    if (body != nullptr) {
        request.set(http::field::content_type, "application/json");
        request.body() = json::serialize(*body);
    }
    request.prepare_payload();
    return request;
}

std::string KubeClient::describe(http::verb method, std::string_view path)
{
    const auto query = path.find('?');
    return std::string(http::to_string(method)) + " " + std::string(path.substr(0, query));
}

KubeClient::KubeClient(KubeAccess access, std::unique_ptr<net::ssl::context> context)
    : m_access(std::move(access)), m_context(std::move(context))
{
}

Expected<std::unique_ptr<KubeClient>> KubeClient::make(KubeAccess access)
{
    auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
    context->set_verify_mode(ssl::verify_peer);
    const std::string cluster = "cluster \"" + access.cluster + "\"";
    const std::string user = "user \"" + access.user + "\"";
    beast::error_code ec;
    context->add_certificate_authority(net::buffer(access.ca_pem), ec);
    if (ec) return make_error(api_error::k_kubeconfig_invalid, "The CA of " + cluster + " in the kubeconfig is not a PEM certificate: " + ec.message() + ".");
    if (!access.client_cert_pem.empty()) {
        context->use_certificate_chain(net::buffer(access.client_cert_pem), ec);
        if (ec) return make_error(api_error::k_kubeconfig_invalid, "The client certificate of " + user + " in the kubeconfig is not a PEM certificate: " + ec.message() + ".");
        // OpenSSL also refuses a key that is not the certificate's ("key values mismatch").
        context->use_private_key(net::buffer(access.client_key_pem), ssl::context::pem, ec);
        if (ec) return make_error(api_error::k_kubeconfig_invalid, "The client key of " + user + " in the kubeconfig cannot be used with its certificate: " + ec.message() + ".");
    }
    return std::unique_ptr<KubeClient>(new KubeClient(std::move(access), std::move(context)));
}

net::awaitable<Expected<TlsStream>> KubeClient::connect(Clock::time_point deadline)
{
    using namespace net::experimental::awaitable_operators;
    const auto failed = [](Error error) { return Expected<TlsStream>(boost::system::in_place_error, std::move(error)); };
    auto executor = co_await net::this_coro::executor;
    const auto connect_deadline = std::min(deadline, Clock::now() + k_connect_timeout);
    const auto& server = m_access.server;

    tcp::resolver resolver(executor);
    net::steady_timer timer(executor);
    timer.expires_at(connect_deadline);
    auto resolved = co_await (resolver.async_resolve(server.host, std::to_string(server.port), as_tuple_awaitable) ||
                              timer.async_wait(as_tuple_awaitable));
    if (resolved.index() == 1)
        co_return failed(make_error(api_error::k_engine_timeout, "The name " + server.host + " of " + where(m_access) + " was not resolved in time."));
    auto [resolve_ec, addresses] = std::get<0>(std::move(resolved));
    if (resolve_ec == net::error::operation_aborted)
        co_return failed(make_error(api_error::k_cancelled, "Connecting to " + where(m_access) + " was cancelled."));
    if (resolve_ec)
        co_return failed(make_error(api_error::k_engine_unreachable, "The host of " + where(m_access) + " cannot be resolved: " + resolve_ec.message() + "."));

    beast::tcp_stream tcp_stream(executor);
    tcp_stream.expires_at(connect_deadline);
    auto [connect_ec, endpoint] = co_await tcp_stream.async_connect(addresses, as_tuple_awaitable);
    (void)endpoint;
    if (connect_ec == net::error::operation_aborted)
        co_return failed(make_error(api_error::k_cancelled, "Connecting to " + where(m_access) + " was cancelled."));
    if (expired(connect_ec))
        co_return failed(make_error(api_error::k_engine_timeout, where(m_access) + " did not accept a connection in time."));
    if (connect_ec)
        co_return failed(make_error(api_error::k_engine_unreachable, "Cannot connect to " + where(m_access) + ": " + connect_ec.message() + "."));

    TlsStream stream(std::move(tcp_stream), *m_context);
    if (!util::is_ip_address(server.host) && SSL_set_tlsext_host_name(stream.native_handle(), server.host.c_str()) != 1)
        co_return failed(make_error(api_error::k_kube_tls, "The host name " + server.host + " cannot be sent in the TLS handshake (SNI)."));
    PeerCheck check;
    stream.set_verify_callback(
        [&check, verify_host = ssl::host_name_verification(server.host)](bool preverified, ssl::verify_context& peer) mutable {
            if (!preverified) {
                if (check.chain_problem.empty())
                    check.chain_problem = X509_verify_cert_error_string(X509_STORE_CTX_get_error(peer.native_handle()));
                return false;
            }
            // host_name_verification looks at the peer's own certificate (depth 0) only.
            const bool named = verify_host(preverified, peer);
            check.name_mismatch = check.name_mismatch || !named;
            return named;
        });
    auto [handshake_ec] = co_await stream.async_handshake(ssl::stream_base::client, as_tuple_awaitable);
    // The callback refers to `check`, which ends with this frame.
    stream.set_verify_callback([](bool preverified, ssl::verify_context&) { return preverified; });
    if (handshake_ec) co_return failed(handshake_error(handshake_ec, check, m_access));
    beast::get_lowest_layer(stream).expires_at(deadline);
    co_return stream;
}

net::awaitable<Expected<KubeReply>> KubeClient::call(http::verb method, std::string path, const json::value* body,
                                                     Timeout timeout, std::size_t body_limit)
{
    const auto deadline = Clock::now() + timeout;
    auto request = make_kube_request(m_access, method, path, body);
    const std::string what = describe(method, path);
    auto stream = co_await connect(deadline);
    if (!stream) co_return stream.error();
    if (auto [ec, n] = co_await http::async_write(*stream, request, as_tuple_awaitable); ec)
        co_return exchange_error(ec, what, body_limit);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(body_limit);
    if (auto [ec, n] = co_await http::async_read(*stream, buffer, parser, as_tuple_awaitable); ec)
        co_return exchange_error(ec, what, body_limit);
    co_return KubeReply{what, parser.get().result_int(), std::move(parser.get().body())};
}

net::awaitable<Expected<StreamedAnswer>> KubeClient::get_lines(std::string path, Timeout open_timeout,
                                                               Clock::time_point deadline, std::size_t max_line_bytes)
{
    const auto request = make_kube_request(m_access, http::verb::get, path, nullptr);
    const std::string what = describe(http::verb::get, path);
    auto stream = co_await connect(std::min(deadline, Clock::now() + open_timeout));
    if (!stream) co_return stream.error();
    // Only the whole answer of a refusal is bounded (k_max_engine_response_bytes); the watch's
    // body is not (m_parser.body_limit(boost::none)): its lines are.
    constexpr std::size_t refusal_limit = limits::k_max_engine_response_bytes;
    if (auto [ec, n] = co_await http::async_write(*stream, request, as_tuple_awaitable); ec)
        co_return exchange_error(ec, what, refusal_limit);
    beast::flat_buffer buffer;
    http::response_parser<http::empty_body> header;
    if (auto [ec, n] = co_await http::async_read_header(*stream, buffer, header, as_tuple_awaitable); ec)
        co_return exchange_error(ec, what, refusal_limit);
    const unsigned status = header.get().result_int();
    if (status / 100 != 2) {
        http::response_parser<http::string_body> whole(std::move(header));
        whole.body_limit(refusal_limit);
        if (auto [ec, n] = co_await http::async_read(*stream, buffer, whole, as_tuple_awaitable); ec)
            co_return exchange_error(ec, what, refusal_limit);
        co_return StreamedAnswer(KubeReply{what, status, std::move(whole.get().body())});
    }
    beast::get_lowest_layer(*stream).expires_at(deadline);
    co_return StreamedAnswer(std::unique_ptr<KubeLineStream>(
        new KubeLineStream(what, std::move(*stream), std::move(buffer), std::move(header), max_line_bytes)));
}

KubeLineStream::KubeLineStream(std::string what, TlsStream stream, beast::flat_buffer buffer,
                               http::response_parser<http::empty_body>&& header, std::size_t max_line_bytes)
    : m_what(std::move(what)),
      m_stream(std::move(stream)),
      m_buffer(std::move(buffer)),
      m_parser(std::move(header)),
      m_lines(max_line_bytes),
      m_max_line_bytes(max_line_bytes),
      m_piece(k_line_read_bytes)
{
    // The body is bounded line by line (m_lines) and in time (the stream's deadline), not in all.
    m_parser.body_limit(boost::none);
}

net::awaitable<Expected<std::optional<std::string>>> KubeLineStream::next_line()
{
    for (;;) {
        if (auto line = m_lines.next()) co_return std::optional<std::string>(std::move(*line));
        if (m_lines.overflowed())
            co_return make_error(api_error::k_engine_protocol, m_what + ": a line of the apiserver's answer is longer than " +
                                                                 std::to_string(m_max_line_bytes) + " bytes.");
        if (m_parser.is_done()) {
            if (m_lines.partial())
                co_return make_error(api_error::k_engine_protocol, m_what + ": the apiserver's answer ended inside a line.");
            co_return std::optional<std::string>();
        }
        auto& body = m_parser.get().body();
        body.data = m_piece.data();
        body.size = m_piece.size();
        auto [ec, n] = co_await http::async_read_some(m_stream, m_buffer, m_parser, as_tuple_awaitable);
        if (ec == http::error::need_buffer) ec = {};
        if (ec) co_return exchange_error(ec, m_what, limits::k_max_engine_response_bytes);  // no body limit is set
        m_lines.add(std::string_view(m_piece.data(), m_piece.size() - body.size));
    }
}

void KubeLineStream::cancel() { beast::get_lowest_layer(m_stream).cancel(); }

net::awaitable<Expected<json::value>> KubeClient::call_json(http::verb method, std::string path, const json::value* body,
                                                             Timeout timeout)
{
    auto reply = co_await call(method, std::move(path), body, timeout);
    if (!reply) co_return reply.error();
    if (reply->status / 100 != 2) co_return status_error(reply->what, reply->status, reply->body);
    auto parsed = util::parse_json_strictly(reply->body, k_answer_depth);
    if (!parsed.ok() || !parsed.value.is_object())
        co_return make_error(api_error::k_engine_protocol, reply->what + ": the apiserver's answer is not a JSON object.");
    co_return std::move(parsed.value);
}

}  // namespace pybox::kube
