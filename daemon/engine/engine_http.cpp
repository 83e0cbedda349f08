#include "daemon/engine/engine_http.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace pybox::engine {

namespace detail {

namespace {

// How much of a non-JSON error body is quoted in a message.
constexpr std::size_t k_quoted_body_chars = 200;

Error status_error(const Reply& reply)
{
    std::string message;
    if (const auto* object = reply.body.if_object()) {
        if (const auto* text = object->if_contains("message"); text && text->is_string()) {
            message = std::string(text->get_string());
        }
    }
    if (message.empty()) {
        message = reply.text.substr(0, k_quoted_body_chars);
    }
    const std::string sentence =
        reply.what + ": the engine answered " + std::to_string(reply.status) + (message.empty() ? "" : ": " + message);
    return make_error(reply.status == 404 ? api_error::k_engine_no_such_object : api_error::k_engine_error, sentence);
}

// TimedStream's catch-all constructor hides result's converting constructor from Error.
Expected<OpenedStream> failed(Error error)
{
    return Expected<OpenedStream>(boost::system::in_place_error, std::move(error));
}

}  // namespace

Error io_error(const beast::error_code& ec, std::string_view what)
{
    if (ec == beast::error::timeout || ec == net::error::timed_out) {
        return make_error(api_error::k_engine_timeout, std::string(what) + ": the engine did not answer in time");
    }
    if (ec == http::error::body_limit) {
        return make_error(api_error::k_engine_protocol, std::string(what) + ": the engine's answer is larger than " +
                                                 std::to_string(limits::k_max_engine_response_bytes) + " bytes");
    }
    return make_error(api_error::k_engine_protocol, std::string(what) + ": " + ec.message());
}

Error cancelled_error(std::string_view what)
{
    return make_error(api_error::k_cancelled, std::string(what) + ": cancelled");
}

json::value parse_lenient(std::string_view text)
{
    boost::system::error_code ec;
    json::value value = json::parse(text, ec);
    return ec ? json::value() : value;
}

Reply make_reply(std::string what, Response&& response)
{
    Reply reply{std::move(what), response.result_int(), {}, std::move(response.body())};
    reply.body = parse_lenient(reply.text);
    return reply;
}

Expected<void> require_success(const Reply& reply)
{
    if (reply.status / 100 == 2) {
        return {};
    }
    return status_error(reply);
}

Expected<json::value> require_json(const Reply& reply, json::kind kind)
{
    if (auto ok = require_success(reply); !ok) {
        return ok.error();
    }
    if (reply.body.kind() != kind) {
        return make_error(api_error::k_engine_protocol, reply.what + ": the engine's answer is not the expected JSON");
    }
    return reply.body;
}

std::optional<std::pair<unsigned, unsigned>> parse_api_version(std::string_view text)
{
    const auto dot = text.find('.');
    if (dot == std::string_view::npos) {
        return std::nullopt;
    }
    const auto parse = [](std::string_view part) -> std::optional<unsigned> {
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
            return std::nullopt;
        }
        return value;
    };
    const auto major = parse(text.substr(0, dot));
    const auto minor = parse(text.substr(dot + 1));
    if (!major || !minor) {
        return std::nullopt;
    }
    return std::pair{*major, *minor};
}

http::request<http::string_body> make_request(http::verb method, const std::string& target)
{
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, k_host);
    return request;
}

void init_parser(http::response_parser<http::string_body>& parser)
{
    // Beast's default header limit (8 KiB) applies; the body is bounded here.
    parser.body_limit(limits::k_max_engine_response_bytes);
}

net::awaitable<Expected<TimedStream>> open_stream(EngineDialer& dialer, Clock::time_point deadline,
                                                  Timeout timeout)
{
    auto socket = co_await dialer.dial(timeout);
    if (!socket) {
        co_return Expected<TimedStream>(boost::system::in_place_error, socket.error());
    }
    TimedStream stream(std::move(*socket));
    stream.expires_at(deadline);
    co_return stream;
}

std::string describe_request(http::verb method, std::string_view target)
{
    return std::string(http::to_string(method)) + " " + std::string(target);
}

bool may_send_again(FailedAt where, http::verb method, const beast::error_code& ec)
{
    if (ec == beast::error::timeout || ec == net::error::timed_out || ec == net::error::operation_aborted) return false;
    if (where == FailedAt::write) return true;
    const bool idempotent = method == http::verb::get || method == http::verb::head || method == http::verb::put ||
                            method == http::verb::delete_ || method == http::verb::options;
    const bool closed = ec == http::error::end_of_stream || ec == net::error::eof ||
                        ec == net::error::connection_reset || ec == net::error::broken_pipe;
    return idempotent && closed;
}

net::awaitable<Expected<Response>> exchange_raw(EngineDialer& dialer, KeptConnections& kept, http::verb method,
                                                const std::string& target, const json::value* body, Timeout timeout)
{
    const std::string what = describe_request(method, target);
    const auto deadline = Clock::now() + timeout;
    auto request = make_request(method, target);
    if (body != nullptr) {
        request.set(http::field::content_type, "application/json");
        request.body() = json::serialize(*body);
    }
    request.prepare_payload();
    for (;;) {
        std::optional<TimedStream> stream;
        auto idle = dialer.keeps_connections() ? kept.take() : std::nullopt;
        const bool reused = idle.has_value();
        if (reused) {
            stream.emplace(std::move(*idle));
            stream->expires_at(deadline);
        } else {
            const auto left = std::chrono::duration_cast<Timeout>(deadline - Clock::now());
            auto dialed = co_await open_stream(dialer, deadline, std::max(left, Timeout(1)));
            if (!dialed) {
                co_return dialed.error();
            }
            stream.emplace(std::move(*dialed));
        }
        if (auto [ec, n] = co_await http::async_write(*stream, request, use_tuple); ec) {
            if (reused && may_send_again(FailedAt::write, method, ec)) {
                kept.clear();
                continue;
            }
            co_return io_error(ec, what);
        }
        beast::flat_buffer buffer;
        http::response_parser<http::string_body> parser;
        init_parser(parser);
        if (auto [ec, n] = co_await http::async_read(*stream, buffer, parser, use_tuple); ec) {
            if (reused && !parser.got_some() && buffer.size() == 0 && may_send_again(FailedAt::read, method, ec)) {
                kept.clear();
                continue;
            }
            co_return io_error(ec, what);
        }
        if (dialer.keeps_connections() && parser.keep_alive()) {
            kept.keep(stream->release_socket());
        }
        co_return parser.release();
    }
}

net::awaitable<Expected<Reply>> exchange(EngineDialer& dialer, KeptConnections& kept, http::verb method,
                                         const std::string& target, const json::value* body, Timeout timeout)
{
    auto response = co_await exchange_raw(dialer, kept, method, target, body, timeout);
    if (!response) {
        co_return response.error();
    }
    co_return make_reply(describe_request(method, target), std::move(*response));
}

net::awaitable<Expected<OpenedStream>> open_and_read_header(EngineDialer& dialer,
                                                            http::request<http::string_body> request,
                                                            const std::vector<unsigned>& accepted,
                                                            Timeout timeout)
{
    const std::string what = describe_request(request.method(), request.target());
    const auto deadline = Clock::now() + timeout;
    auto stream = co_await open_stream(dialer, deadline, timeout);
    if (!stream) {
        co_return failed(stream.error());
    }
    request.prepare_payload();
    if (auto [ec, n] = co_await http::async_write(*stream, request, use_tuple); ec) {
        co_return failed(io_error(ec, what));
    }
    OpenedStream opened{std::move(*stream), {}, std::make_unique<http::response_parser<http::string_body>>()};
    init_parser(*opened.parser);
    if (auto [ec, n] = co_await http::async_read_header(opened.stream, opened.buffer, *opened.parser, use_tuple);
        ec) {
        co_return failed(io_error(ec, what));
    }
    const unsigned status = opened.parser->get().result_int();
    if (std::find(accepted.begin(), accepted.end(), status) == accepted.end()) {
        if (!opened.parser->is_done()) {
            if (auto [ec, n] = co_await http::async_read(opened.stream, opened.buffer, *opened.parser, use_tuple);
                ec) {
                co_return failed(io_error(ec, what));
            }
        }
        co_return failed(status_error(make_reply(what, opened.parser->release())));
    }
    co_return opened;
}

namespace {

using namespace net::experimental::awaitable_operators;

class UnixSocketDialer final : public EngineDialer {
public:
    UnixSocketDialer(net::any_io_executor executor, std::filesystem::path socket_path)
        : m_executor(std::move(executor)), m_socket_path(std::move(socket_path)) {}

    net::awaitable<Expected<Stream>> dial(Timeout timeout) override
    {
        net::local::stream_protocol::endpoint endpoint;
        try {
            endpoint = net::local::stream_protocol::endpoint(m_socket_path.string());
        } catch (const boost::system::system_error& e) {
            co_return make_error(api_error::k_engine_unreachable, "cannot use " + describe() + ": " + e.code().message());
        }
        Stream socket(m_executor);
        net::steady_timer timer(m_executor, timeout);
        auto outcome = co_await (socket.async_connect(endpoint, use_tuple) || timer.async_wait(use_tuple));
        if (outcome.index() == 1) {
            co_return make_error(api_error::k_engine_timeout, "connecting to " + describe() + " timed out");
        }
        if (const auto [ec] = std::get<0>(outcome); ec) {
            co_return make_error(api_error::k_engine_unreachable, "cannot connect to " + describe() + ": " + ec.message());
        }
        co_return socket;
    }

    std::string describe() const override { return "unix://" + m_socket_path.string(); }

private:
    net::any_io_executor m_executor;
    std::filesystem::path m_socket_path;
};

}  // namespace

}  // namespace detail

std::unique_ptr<EngineDialer> make_unix_socket_dialer(net::any_io_executor executor,
                                                      std::filesystem::path socket_path)
{
    return std::make_unique<detail::UnixSocketDialer>(std::move(executor), std::move(socket_path));
}

}  // namespace pybox::engine
