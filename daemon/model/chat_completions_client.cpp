#include "daemon/model/chat_completions_client.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/model/model_limits.hpp"
#include "daemon/model/model_retry.hpp"
#include "util/host_address.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <string>
#include <utility>
#include <variant>

namespace pybox::model {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using Request = http::request<http::string_body>;

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

// One answer as it came: its status, Retry-After and body.
struct Reply {
    unsigned status = 0;
    std::string retry_after;
    std::string body;
};

// What the certificate check saw, for the message when the handshake fails.
struct VerifyOutcome {
    std::string chain_problem;
    bool name_mismatch = false;
};

std::string seconds_text(std::chrono::milliseconds duration)
{
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) + " s";
}

bool timed_out(const beast::error_code& ec) { return ec == beast::error::timeout || ec == net::error::timed_out; }

// The caller cancelled the call (its client went away).
Error cancelled(const ModelConfig& config)
{
    return make_error(api_error::k_cancelled, "The call to the model service at " + config.endpoint.describe() + " was cancelled.");
}

// A failure of the exchange after the connection was made.
Error exchange_error(const beast::error_code& ec, const ModelConfig& config, std::string_view doing)
{
    const std::string where = config.endpoint.describe();
    if (ec == net::error::operation_aborted) return cancelled(config);
    if (timed_out(ec))
        return make_error(api_error::k_model_timeout, "The model service at " + where + " did not answer within " +
                                               seconds_text(config.answer_timeout) + " (answer_timeout_s).");
    if (ec == http::error::body_limit)
        return make_error(api_error::k_model_protocol, "The model service at " + where + " sent an answer larger than " +
                                                std::to_string(k_max_answer_bytes) + " bytes; it was refused.");
    if (ec == http::error::header_limit)
        return make_error(api_error::k_model_protocol, "The model service at " + where + " sent an answer header larger than " +
                                                std::to_string(k_max_answer_header_bytes) + " bytes; it was refused.");
    return make_error(api_error::k_model_unreachable,
                      "The model service at " + where + " failed while " + std::string(doing) + ": " + ec.message() + ".");
}

net::awaitable<Expected<tcp::resolver::results_type>> resolve(net::any_io_executor executor, const ModelEndpoint& endpoint,
                                                              Clock::time_point deadline)
{
    using namespace net::experimental::awaitable_operators;
    tcp::resolver resolver(executor);
    net::steady_timer timer(executor);
    timer.expires_at(deadline);
    auto outcome = co_await (resolver.async_resolve(endpoint.host, std::to_string(endpoint.port), use_tuple) ||
                             timer.async_wait(use_tuple));
    if (outcome.index() == 1)
        co_return make_error(api_error::k_model_timeout, "The name " + endpoint.host + " was not resolved within " +
                                                  seconds_text(k_connect_timeout) + ".");
    auto [ec, results] = std::get<0>(std::move(outcome));
    if (ec == net::error::operation_aborted)
        co_return make_error(api_error::k_cancelled, "The call to the model service at " + endpoint.describe() + " was cancelled.");
    if (ec) co_return make_error(api_error::k_model_unreachable, "The model service's host " + endpoint.host +
                                                          " cannot be resolved: " + ec.message() + ".");
    co_return results;
}

net::awaitable<Expected<void>> connect(beast::tcp_stream& stream, const tcp::resolver::results_type& addresses,
                                       const ModelEndpoint& endpoint, Clock::time_point deadline)
{
    stream.expires_at(deadline);
    auto [ec, connected] = co_await stream.async_connect(addresses, use_tuple);
    (void)connected;
    if (ec == net::error::operation_aborted)
        co_return make_error(api_error::k_cancelled, "The call to the model service at " + endpoint.describe() + " was cancelled.");
    if (timed_out(ec))
        co_return make_error(api_error::k_model_timeout, "The model service at " + endpoint.describe() + " did not accept a connection within " +
                                                  seconds_text(k_connect_timeout) + ".");
    if (ec)
        co_return make_error(api_error::k_model_unreachable,
                             "The model service at " + endpoint.describe() + " cannot be reached: " + ec.message() + ".");
    co_return Expected<void>{};
}

Request make_request(const ModelConfig& config, const std::string& body, const ModelKey& key)
{
    const auto& endpoint = config.endpoint;
    Request request{http::verb::post, endpoint.target, 11};
    std::string host = endpoint.host.find(':') != std::string::npos ? "[" + endpoint.host + "]" : endpoint.host;
    if (endpoint.port != (endpoint.tls ? 443 : 80)) host += ":" + std::to_string(endpoint.port);
    request.set(http::field::host, host);
    request.set(http::field::user_agent, "pyboxd");
    request.set(http::field::content_type, "application/json");
    request.set(http::field::accept, "application/json");
    request.set(http::field::connection, "close");
    request.set(http::field::authorization, "Bearer " + std::string(key.reveal()));
    request.body() = body;
    request.prepare_payload();
    return request;
}

template <class Stream>
net::awaitable<Expected<Reply>> send_and_read(Stream& stream, beast::tcp_stream& timed, Request& request,
                                              const ModelConfig& config)
{
    timed.expires_after(config.answer_timeout);
    auto [write_ec, written] = co_await http::async_write(stream, request, use_tuple);
    (void)written;
    if (write_ec) co_return exchange_error(write_ec, config, "sending the request");
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(k_max_answer_header_bytes));
    parser.body_limit(k_max_answer_bytes);
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
    (void)read;
    if (read_ec) co_return exchange_error(read_ec, config, "reading the answer");
    auto& response = parser.get();
    Reply reply;
    reply.status = response.result_int();
    reply.retry_after = std::string(response[http::field::retry_after]);
    reply.body = std::move(response.body());
    co_return reply;
}

Error tls_error(const beast::error_code& ec, const VerifyOutcome& verify, const ModelConfig& config)
{
    const std::string where = config.endpoint.describe();
    if (ec == net::error::operation_aborted) return cancelled(config);
    if (timed_out(ec))
        return make_error(api_error::k_model_timeout, "The TLS handshake with the model service at " + where +
                                               " did not finish within " + seconds_text(k_connect_timeout) + ".");
    const std::string stores =
        config.ca_file ? "the system's CA certificates and " + config.ca_file->string() : "the system's CA certificates";
    if (!verify.chain_problem.empty())
        return make_error(api_error::k_model_tls, "The certificate of the model service at " + where + " does not verify against " +
                                           stores + ": " + verify.chain_problem + ".");
    if (verify.name_mismatch)
        return make_error(api_error::k_model_tls, "The certificate of the model service at " + where + " is not for the host " +
                                           config.endpoint.host + ".");
    return make_error(api_error::k_model_tls, "The TLS handshake with the model service at " + where + " failed: " + ec.message() + ".");
}

// One try: a fresh connection, the request, the whole answer.
net::awaitable<Expected<Reply>> try_once(net::any_io_executor executor, const ModelConfig& config, Request& request)
{
    const auto& endpoint = config.endpoint;
    const auto connect_deadline = Clock::now() + k_connect_timeout;
    auto addresses = co_await resolve(executor, endpoint, connect_deadline);
    if (!addresses) co_return addresses.error();
    beast::tcp_stream tcp_stream(executor);
    if (!endpoint.tls) {
        for (const auto& entry : *addresses)
            if (!entry.endpoint().address().is_loopback())
                co_return make_error(api_error::k_model_unreachable, "The model service's host " + endpoint.host +
                                                              " resolves to an address that is not a loopback one; "
                                                              "http:// is used only within this machine.");
        auto connected = co_await connect(tcp_stream, *addresses, endpoint, connect_deadline);
        if (!connected) co_return connected.error();
        auto reply = co_await send_and_read(tcp_stream, tcp_stream, request, config);
        co_return reply;
    }

    ssl::context context(ssl::context::tls_client);
    beast::error_code ec;
    context.set_default_verify_paths(ec);
    if (!ec && config.ca_file) context.load_verify_file(config.ca_file->string(), ec);
    if (ec)
        co_return make_error(api_error::k_model_tls, "The CA certificates " +
                                              (config.ca_file ? "in " + config.ca_file->string() : std::string("of the system")) +
                                              " cannot be loaded: " + ec.message() + ".");
    SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);
    context.set_verify_mode(ssl::verify_peer);

    auto connected = co_await connect(tcp_stream, *addresses, endpoint, connect_deadline);
    if (!connected) co_return connected.error();
    beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp_stream), context);
    if (!util::is_ip_address(endpoint.host) && SSL_set_tlsext_host_name(stream.native_handle(), endpoint.host.c_str()) != 1)
        co_return make_error(api_error::k_model_tls, "The host name " + endpoint.host + " cannot be sent in the TLS handshake (SNI).");
    VerifyOutcome verify;
    stream.set_verify_callback(
        [&verify, check = ssl::host_name_verification(endpoint.host)](bool preverified, ssl::verify_context& peer) mutable {
            if (!preverified) {
                if (verify.chain_problem.empty())
                    verify.chain_problem = X509_verify_cert_error_string(X509_STORE_CTX_get_error(peer.native_handle()));
                return false;
            }
            // Checks the peer's own certificate (depth 0) only; the chain above it was verified.
            const bool named = check(preverified, peer);
            verify.name_mismatch = verify.name_mismatch || !named;
            return named;
        });
    stream.next_layer().expires_at(connect_deadline);
    auto [handshake_ec] = co_await stream.async_handshake(ssl::stream_base::client, use_tuple);
    if (handshake_ec) co_return tls_error(handshake_ec, verify, config);
    auto reply = co_await send_and_read(stream, stream.next_layer(), request, config);
    co_return reply;
}

// The error of an answer that is not 2xx and is not tried again.
Error status_error(const Reply& reply, const ModelConfig& config, const ModelKey& key, std::string_view why_not)
{
    const std::string reason(http::obsolete_reason(http::int_to_status(reply.status)));
    const std::string head = "The model service at " + config.endpoint.describe() + " answered " +
                             std::to_string(reply.status) + (reason.empty() || reason == "<unknown-status>" ? "" : " " + reason);
    if (reply.status == 401 || reply.status == 403)
        return make_error(api_error::k_model_auth, head + ": it refused the key from " + describe_key_source(config.key) +
                                            ". Check the key; a refused key is not tried again.");
    if (reply.status / 100 == 3)
        return make_error(api_error::k_model_error, head + ": redirects are not followed (the key would go along); set "
                                                "model.base_url to the service's own address.");
    const auto excerpt = service_error_excerpt(reply.body, key.reveal());
    const bool retried = is_retried_status(reply.status);
    return make_error(retried ? api_error::k_model_busy : api_error::k_model_error,
                      head + (excerpt.empty() ? "" : ": " + excerpt) + "; not tried again: " + std::string(why_not) + ".");
}

}  // namespace

ChatCompletionsClient::ChatCompletionsClient(net::any_io_executor executor, ModelConfig config)
    : m_executor(std::move(executor)), m_config(std::move(config))
{
}

net::awaitable<Expected<ModelAnswer>> ChatCompletionsClient::complete(std::vector<ModelMessage> messages,
                                                                     ModelOptions options)
{
    const auto started = Clock::now();
    auto body = chat_request_body(m_config.model, messages, options);
    if (!body) co_return body.error();
    auto key = load_model_key(m_config.key);
    if (!key) co_return key.error();
    auto request = make_request(m_config, *body, *key);
    for (int tries = 1;; ++tries) {
        auto reply = co_await try_once(m_executor, m_config, request);
        if (!reply) co_return reply.error();
        if (reply->status / 100 == 2) {
            auto answer = parse_chat_answer(reply->body);
            if (!answer) co_return answer.error();
            answer->latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
            answer->tries = tries;
            co_return answer;
        }
        const auto retry_after = reply->retry_after.empty()
                                     ? std::nullopt
                                     : parse_retry_after(reply->retry_after, std::chrono::system_clock::now());
        const auto plan = reply->status == 401 || reply->status == 403 ? RetryPlan{} : plan_retry(reply->status, tries, retry_after);
        if (!plan.again) co_return status_error(*reply, m_config, *key, plan.why_not);
        net::steady_timer wait(m_executor, plan.wait);
        auto [ec] = co_await wait.async_wait(use_tuple);
        if (ec) co_return cancelled(m_config);
    }
}

}  // namespace pybox::model
