#include "daemon/engine/engine_sessions.hpp"

#include "common/api_error_codes.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include <cstdint>
#include <utility>

namespace pybox::engine::detail {

namespace {

using namespace net::experimental::awaitable_operators;

class EngineWaitHandle final : public WaitHandle {
public:
    EngineWaitHandle(std::string what, OpenedStream opened) : m_what(std::move(what)), m_opened(std::move(opened)) {}

    net::awaitable<Expected<WaitResult>> result(Timeout timeout) override
    {
        if (m_cancelled) {
            co_return cancelled_error(m_what);
        }
        m_opened.stream.expires_after(timeout);
        const auto [ec, n] =
            co_await http::async_read(m_opened.stream, m_opened.buffer, *m_opened.parser, use_tuple);
        if (m_cancelled) {
            co_return cancelled_error(m_what);
        }
        if (ec) {
            co_return io_error(ec, m_what);
        }
        const Reply reply = make_reply(m_what, m_opened.parser->release());
        const auto* object = reply.body.if_object();
        const json::value* code = object ? object->if_contains("StatusCode") : nullptr;
        boost::system::error_code number_ec;
        const auto status_code = code ? code->to_number<std::int64_t>(number_ec) : std::int64_t{0};
        if (code == nullptr || number_ec) {
            co_return make_error(api_error::k_engine_protocol, m_what + ": the engine's answer has no StatusCode");
        }
        WaitResult result{status_code, {}};
        if (const auto* error = object->if_contains("Error"); error && error->is_object()) {
            if (const auto* message = error->get_object().if_contains("Message"); message && message->is_string()) {
                result.error = std::string(message->get_string());
            }
        }
        co_return result;
    }

    void cancel() override
    {
        m_cancelled = true;
        m_opened.stream.close();
    }

private:
    std::string m_what;
    OpenedStream m_opened;
    bool m_cancelled = false;
};

class EngineAttachSession final : public AttachSession {
public:
    EngineAttachSession(std::string what, Stream socket, std::string pending)
        : m_what(std::move(what)), m_socket(std::move(socket)), m_pending(std::move(pending)) {}

    net::awaitable<Expected<void>> write_stdin(std::string_view bytes, Timeout timeout) override
    {
        net::steady_timer timer(m_socket.get_executor(), timeout);
        auto outcome =
            co_await (net::async_write(m_socket, net::buffer(bytes), use_tuple) || timer.async_wait(use_tuple));
        if (outcome.index() == 1) {
            co_return make_error(api_error::k_engine_timeout, m_what + ": writing stdin timed out");
        }
        if (const auto [ec, n] = std::get<0>(outcome); ec) {
            co_return m_cancelled ? cancelled_error(m_what) : io_error(ec, m_what + ": writing stdin");
        }
        co_return Expected<void>{};
    }

    Expected<void> close_stdin() override
    {
        boost::system::error_code ec;
        m_socket.shutdown(net::socket_base::shutdown_send, ec);
        if (ec) {
            return io_error(ec, m_what + ": closing stdin");
        }
        return {};
    }

    net::awaitable<Expected<std::string>> read_some() override
    {
        if (!m_pending.empty()) {
            co_return std::exchange(m_pending, {});
        }
        std::string chunk(k_chunk_bytes, '\0');
        const auto [ec, n] = co_await m_socket.async_read_some(net::buffer(chunk), use_tuple);
        if (m_cancelled) {
            co_return cancelled_error(m_what);
        }
        if (ec == net::error::eof) {
            co_return std::string();
        }
        if (ec) {
            co_return io_error(ec, m_what + ": reading output");
        }
        chunk.resize(n);
        co_return chunk;
    }

    void cancel() override
    {
        m_cancelled = true;
        boost::system::error_code ec;
        m_socket.close(ec);
    }

private:
    std::string m_what;
    Stream m_socket;
    std::string m_pending;
    bool m_cancelled = false;
};

}  // namespace

std::unique_ptr<WaitHandle> make_wait_handle(std::string what, OpenedStream opened)
{
    return std::make_unique<EngineWaitHandle>(std::move(what), std::move(opened));
}

std::unique_ptr<AttachSession> make_attach_session(std::string what, Stream socket, std::string pending)
{
    return std::make_unique<EngineAttachSession>(std::move(what), std::move(socket), std::move(pending));
}

}  // namespace pybox::engine::detail
