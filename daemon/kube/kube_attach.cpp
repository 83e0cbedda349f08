#include "daemon/kube/kube_attach.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/kube/kube_limits.hpp"
#include "daemon/kube/kube_status.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream_base.hpp>

#include <chrono>
#include <utility>

namespace pybox::kube {

namespace {

namespace websocket = beast::websocket;
constexpr auto attach_use_tuple = net::as_tuple(net::use_awaitable);

bool attach_expired(const beast::error_code& ec) { return ec == beast::error::timeout || ec == net::error::timed_out; }

Error attach_io_error(const beast::error_code& ec, const std::string& what, std::string_view doing)
{
    if (ec == net::error::operation_aborted) return make_error(api_error::k_cancelled, what + ": cancelled.");
    if (attach_expired(ec)) return make_error(api_error::k_engine_timeout, what + ": " + std::string(doing) + " did not finish in time.");
    if (ec == websocket::error::message_too_big)
        return make_error(api_error::k_engine_protocol, what + ": the apiserver sent a message of more than " +
                                                         std::to_string(k_max_attach_message_bytes) + " bytes.");
    return make_error(api_error::k_engine_unreachable, what + ": " + std::string(doing) + " failed: " + ec.message() + ".");
}

// The stream ended without a websocket close: the apiserver dropped the connection.
bool dropped(const beast::error_code& ec)
{
    return ec == net::error::eof || ec == net::ssl::error::stream_truncated || ec == net::error::connection_reset;
}

}  // namespace

AttachSession::AttachSession(Stream stream, AttachProtocol protocol, std::string what)
    : m_stream(std::move(stream)), m_protocol(protocol), m_what(std::move(what))
{
}

net::awaitable<Expected<std::unique_ptr<AttachSession>>> AttachSession::open(KubeClient& client,
                                                                             std::string_view namespace_name,
                                                                             std::string_view pod,
                                                                             std::string_view container, Timeout timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::string path = "/api/v1/namespaces/" + std::string(namespace_name) + "/pods/" + std::string(pod) +
                             "/attach?container=" + std::string(container) + "&stdin=true&stdout=true&stderr=true";
    const std::string what = "attach to pod " + std::string(namespace_name) + "/" + std::string(pod);
    auto connected = co_await client.connect(deadline);
    if (!connected) co_return connected.error();
    Stream stream(std::move(*connected));
    stream.set_option(websocket::stream_base::decorator([token = client.access().token](websocket::request_type& request) {
        request.set(http::field::user_agent, kube_user_agent());
        request.set(http::field::sec_websocket_protocol, offered_attach_protocols());
        if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
    }));
    stream.read_message_max(k_max_attach_message_bytes);
    websocket::response_type response;
    auto [ec] = co_await stream.async_handshake(response, host_header(client.access().server),
                                                client.access().server.base_path + path, attach_use_tuple);
    if (ec == websocket::error::upgrade_declined)
        co_return status_error(KubeClient::describe(http::verb::get, path), response.result_int(), response.body());
    if (ec) co_return attach_io_error(ec, what, "the websocket handshake");
    const auto header = response[http::field::sec_websocket_protocol];
    const auto protocol = agreed_attach_protocol(std::string_view(header.data(), header.size()));
    if (!protocol)
        co_return make_error(api_error::k_engine_protocol, what + ": the apiserver agreed to the channel protocol \"" +
                                                            std::string(header) + "\", not one of " +
                                                            std::string(offered_attach_protocols()) + ".");
    stream.binary(true);
    // One frame a message: the kubelet's websocket reader takes every frame for a message of
    // its own, its first byte the channel, so a message Beast fragmented (at its 4096-byte write
    // buffer, by default) lost its continuation frames. Measured on the test cluster: a program
    // frame of more than 4096 bytes lost what followed, and the kill line then filled the
    // feeder's count, so the program read the nonce as its own source.
    stream.auto_fragment(false);
    co_return std::make_unique<AttachSession>(std::move(stream), *protocol, what);
}

net::awaitable<Expected<void>> AttachSession::write_stdin(std::string_view bytes, Timeout timeout)
{
    auto& socket = beast::get_lowest_layer(m_stream);
    socket.expires_after(timeout);
    for (const auto& message : stdin_messages(bytes)) {
        if (auto [ec, n] = co_await m_stream.async_write(net::buffer(message), attach_use_tuple); ec)
            co_return attach_io_error(ec, m_what, "writing stdin");
    }
    // The stream has one timer for both directions: a waiting read gets its own deadline back.
    if (m_read_deadline) socket.expires_at(*m_read_deadline);
    co_return Expected<void>{};
}

net::awaitable<Expected<void>> AttachSession::close_stdin(Timeout timeout)
{
    const auto message = close_stdin_message(m_protocol);
    if (!message)
        co_return make_error(api_error::k_engine_error, m_what + ": stdin cannot be closed on " +
                                                         std::string(attach_protocol_name(m_protocol)) + ".");
    beast::get_lowest_layer(m_stream).expires_after(timeout);
    if (auto [ec, n] = co_await m_stream.async_write(net::buffer(*message), attach_use_tuple); ec)
        co_return attach_io_error(ec, m_what, "closing stdin");
    co_return Expected<void>{};
}

net::awaitable<Expected<std::optional<OutputChunk>>> AttachSession::read(Timeout timeout)
{
    using Result = Expected<std::optional<OutputChunk>>;
    if (m_ended) co_return std::optional<OutputChunk>();
    m_read_deadline = std::chrono::steady_clock::now() + timeout;
    beast::get_lowest_layer(m_stream).expires_at(*m_read_deadline);
    const struct ReadDone {
        std::optional<std::chrono::steady_clock::time_point>& deadline;
        ~ReadDone() { deadline.reset(); }
    } read_done{m_read_deadline};
    for (;;) {
        beast::flat_buffer buffer;
        auto [ec, n] = co_await m_stream.async_read(buffer, attach_use_tuple);
        if (ec == websocket::error::closed || dropped(ec)) {
            m_ended = true;
            co_return std::optional<OutputChunk>();
        }
        if (ec) co_return Result(boost::system::in_place_error, attach_io_error(ec, m_what, "reading output"));
        if (!m_stream.got_binary())
            co_return Result(boost::system::in_place_error,
                             make_error(api_error::k_engine_protocol, m_what + ": the apiserver sent a text message."));
        auto message = decode_attach_message(beast::buffers_to_string(buffer.data()));
        if (!message) co_return Result(boost::system::in_place_error, message.error());
        switch (message->kind) {
        case AttachMessage::Kind::opened: continue;
        case AttachMessage::Kind::status:
            if (m_status_bytes.size() + message->status_bytes.size() > k_max_attach_status_bytes)
                co_return Result(boost::system::in_place_error,
                                 make_error(api_error::k_engine_protocol, m_what + ": the apiserver sent a status of more than " +
                                                                           std::to_string(k_max_attach_status_bytes) + " bytes."));
            m_status_bytes += message->status_bytes;
            continue;
        case AttachMessage::Kind::output: co_return std::optional<OutputChunk>(std::move(message->chunk));
        }
    }
}

Expected<std::optional<AttachStatus>> AttachSession::status() const
{
    if (m_status_bytes.empty()) return std::optional<AttachStatus>();
    auto status = parse_attach_status(m_status_bytes);
    if (!status) return status.error();
    return std::optional<AttachStatus>(std::move(*status));
}

void AttachSession::cancel()
{
    beast::get_lowest_layer(m_stream).cancel();
}

net::awaitable<void> AttachSession::close(Timeout timeout)
{
    if (m_ended || !m_stream.is_open()) co_return;
    beast::get_lowest_layer(m_stream).expires_after(timeout);
    auto [ec] = co_await m_stream.async_close(websocket::close_code::normal, attach_use_tuple);
    (void)ec;
    m_ended = true;
}

}  // namespace pybox::kube
