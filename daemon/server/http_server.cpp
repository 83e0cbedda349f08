#include "common/version.hpp"
#include "common/api_error_codes.hpp"
#include "daemon/server/http_server.hpp"

#include "common/process.hpp"
#include "daemon/server/api_router.hpp"
#include "daemon/server/callers.hpp"
#include "daemon/server/request_reader.hpp"
#include "daemon/server/streamed_answer.hpp"
#include "proto/api.hpp"
#include "proto/run_events.hpp"
#include "util/text.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <exception>
#include <iostream>
#include <list>
#include <optional>
#include <sstream>
#include <system_error>

namespace pybox::daemon {

namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using Local = net::local::stream_protocol;
using Stream = beast::basic_stream<Local, net::any_io_executor, beast::unlimited_rate_policy>;

namespace {

constexpr auto k_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t k_read_chunk = 4096;
constexpr std::chrono::milliseconds k_accept_retry_pause{100};

void report_failure(std::exception_ptr failure)
{
    if (!failure) return;
    try {
        std::rethrow_exception(failure);
    } catch (const std::exception& error) {
        std::cerr << "pyboxd: a connection ended on an unexpected error: " << error.what() << '\n';
    } catch (...) {
        std::cerr << "pyboxd: a connection ended on an unexpected error of unknown type\n";
    }
}

// Reads one request into `reader` under the deadline already set on the stream, answering
// `Expect: 100-continue` so clients such as curl send the body without a pause. The parse runs
// here, in the connection's coroutine, so that whatever it throws ends this connection only.
// False when the connection is to be closed without an answer (the client left or went quiet
// past the deadline, or the server is stopping); true when the reader is done or refused.
net::awaitable<bool> read_request(Stream& stream, beast::flat_buffer& buffer, RequestReader& reader)
{
    bool continued = false;
    for (;;) {
        const auto offered = buffer.cdata();
        buffer.consume(reader.put(std::string_view(static_cast<const char*>(offered.data()), offered.size())));
        if (reader.done() || reader.refusal()) co_return true;
        if (!continued && reader.expects_continue()) {
            http::response<http::empty_body> go_on{http::status::continue_, reader.message().version()};
            auto [write_ec, written] = co_await http::async_write(stream, go_on, k_tuple);
            if (write_ec) co_return false;
            continued = true;
        }
        auto [ec, received] = co_await stream.async_read_some(buffer.prepare(k_read_chunk), k_tuple);
        if (ec) co_return false;
        buffer.commit(received);
    }
}

http::response<http::string_body> response_message(ApiResponse response, unsigned version, bool keep_alive)
{
    http::response<http::string_body> message{static_cast<http::status>(response.status), version};
    message.set(http::field::server, "pyboxd/" + pybox::version());
    message.set(http::field::content_type, "application/json");
    if (response.retry_after) message.set(http::field::retry_after, std::to_string(response.retry_after->count()));
    if (response.receipt_not_kept)
        message.set(proto::k_receipt_not_kept_header, util::printable_excerpt(*response.receipt_not_kept, 1000));
    message.keep_alive(keep_alive);
    if (!response.body.ends_with('\n')) response.body.push_back('\n');
    message.body() = std::move(response.body);
    message.prepare_payload();
    return message;
}

net::awaitable<bool> write_response(Stream& stream, ApiResponse response, unsigned version, bool keep_alive,
                                    std::chrono::milliseconds timeout)
{
    auto message = response_message(std::move(response), version, keep_alive);
    stream.expires_after(timeout);
    auto [ec, written] = co_await http::async_write(stream, message, k_tuple);
    co_return !ec;
}

// Whether the client asked for POST /v1/runs as a stream of events (docs/api.md "Streamed runs").
bool wants_run_events(const http::request<http::string_body>& message)
{
    const std::string_view target = message.target();
    return message.method() == http::verb::post && target.substr(0, target.find('?')) == "/v1/runs" &&
           std::string_view(message[http::field::accept]).find(proto::k_run_events_media_type) != std::string_view::npos;
}

// Writes a streamed run's events as they come, as one chunked 200 answer; a run that ended
// before its first event is answered plainly instead. False when a write failed or took longer
// than `timeout` (the client stopped reading): the connection is then done.
net::awaitable<bool> write_streamed(Stream& stream, StreamedAnswer& answer, unsigned version, bool keep_alive,
                                    std::chrono::milliseconds timeout)
{
    co_await answer.wait();
    if (const auto& plain = answer.plain_response())
        co_return co_await write_response(stream, *plain, version, keep_alive, timeout);
    http::response<http::empty_body> head{http::status::ok, version};
    head.set(http::field::server, "pyboxd/" + pybox::version());
    head.set(http::field::content_type, proto::k_run_events_media_type);
    head.keep_alive(keep_alive);
    head.chunked(true);
    http::response_serializer<http::empty_body> serializer(head);
    stream.expires_after(timeout);
    auto [head_ec, head_bytes] = co_await http::async_write_header(stream, serializer, k_tuple);
    if (head_ec) co_return false;
    for (;;) {
        const std::string lines = answer.take();
        if (!lines.empty()) {
            stream.expires_after(timeout);
            auto [ec, written] = co_await net::async_write(stream, http::make_chunk(net::buffer(lines)), k_tuple);
            if (ec) co_return false;
        } else if (answer.finished()) {
            break;
        }
        co_await answer.wait();
    }
    stream.expires_after(timeout);
    auto [last_ec, last_bytes] = co_await net::async_write(stream, http::make_chunk_last(), k_tuple);
    co_return !last_ec;
}

// Answers a connection the server has no room for with 503 too_many_connections and closes it,
// without reading its request and without waiting: the answer is written only if the socket
// takes it at once (a few hundred bytes into an empty socket buffer).
void refuse_connection(Local::socket socket, std::size_t max_connections)
{
    std::ostringstream text;
    text << response_message(error_response(make_error(api_error::k_too_many_connections,
                                                       "pyboxd holds " + std::to_string(max_connections) +
                                                           " connections, as many as it may, and none is idle; "
                                                           "nothing was read from this one, so nothing ran. Retry in " +
                                                           std::to_string(limits::k_busy_retry_after.count()) + " s.")),
                             11, false);
    const std::string bytes = text.str();
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    if (!ec) socket.write_some(net::buffer(bytes), ec);
    socket.close(ec);
}

// Reads from the client while its request is handled. Bytes it pipelines are kept in `buffer`
// for the next request (bounded); end of stream or an error means the client is gone: emit.
// Never completes by itself after that; the handler finishing cancels it.
net::awaitable<void> watch_client(Local::socket& socket, beast::flat_buffer& buffer,
                                  net::cancellation_signal& client_gone, bool& gone)
{
    const std::size_t cap = limits::k_max_request_header_bytes + limits::k_max_request_body_bytes;
    while (buffer.size() < cap) {
        auto [ec, received] = co_await socket.async_read_some(buffer.prepare(k_read_chunk), k_tuple);
        if (ec) {
            const auto state = co_await net::this_coro::cancellation_state;
            if (state.cancelled() != net::cancellation_type::none) co_return;
            gone = true;
            client_gone.emit(net::cancellation_type::terminal);
            break;
        }
        buffer.commit(received);
    }
    net::steady_timer until_cancelled(socket.get_executor(), net::steady_timer::time_point::max());
    co_await until_cancelled.async_wait(k_tuple);
}

// The router's answer, or internal_error when handling the request threw (a bug, logged). Nothing
// may leave it by an exception: Asio's operator|| waits for one side to succeed, so the client's
// watcher beside it would never be cancelled, and the connection would hang.
net::awaitable<ApiResponse> handle_answering_bugs(ApiRouter& router, ApiRequest request, const Caller& caller,
                                                  net::cancellation_slot client_gone, RunObserver* run_events)
{
    try {
        co_return co_await router.handle(std::move(request), caller, client_gone, run_events);
    } catch (const std::exception& error) {
        std::cerr << "pyboxd: a request failed on an unexpected error: " << error.what() << '\n';
    } catch (...) {
        std::cerr << "pyboxd: a request failed on an unexpected error of unknown type\n";
    }
    co_return error_response(make_error(api_error::k_internal_error, "The daemon failed while handling the request."));
}

// Keeps a connection in the server's list while its coroutine runs, with whether it is idle
// (no request begun) and since when. Closing it from outside (eviction, stop) takes it off
// the list at once, so the list counts exactly the connections that hold a slot.
class ConnectionEntry {
public:
    ConnectionEntry(std::list<ConnectionEntry*>& connections, Local::socket& socket)
        : m_connections(connections), m_socket(socket), m_position(connections.insert(connections.end(), this))
    {
    }
    ~ConnectionEntry()
    {
        if (m_listed) m_connections.erase(m_position);
    }
    ConnectionEntry(const ConnectionEntry&) = delete;
    ConnectionEntry& operator=(const ConnectionEntry&) = delete;

    void mark_idle() { m_idle_since = std::chrono::steady_clock::now(); }
    void mark_busy() { m_idle_since.reset(); }
    const std::optional<std::chrono::steady_clock::time_point>& idle_since() const { return m_idle_since; }

    // Closes the socket (its coroutine then ends) and gives up the slot.
    void close_and_unlist()
    {
        boost::system::error_code ec;
        m_socket.close(ec);
        if (m_listed) m_connections.erase(m_position);
        m_listed = false;
    }

private:
    std::list<ConnectionEntry*>& m_connections;
    Local::socket& m_socket;
    std::list<ConnectionEntry*>::iterator m_position;
    bool m_listed = true;
    std::optional<std::chrono::steady_clock::time_point> m_idle_since;
};

}  // namespace

struct HttpServer::Impl {
    Impl(net::any_io_executor executor_, fs::path socket_path_, DaemonServices services, HttpServerOptions options_)
        : executor(std::move(executor_)),
          socket_path(std::move(socket_path_)),
          router(services),
          options(options_),
          acceptor(executor)
    {
    }

    Expected<void> start();
    void stop();
    net::awaitable<void> accept_loop();
    // Closes the connection idle the longest; false when none is idle.
    bool evict_oldest_idle();
    net::awaitable<void> serve(Local::socket socket);
    // nullopt when the client left before the answer was ready.
    net::awaitable<std::optional<ApiResponse>> handle_watching_client(Stream& stream, beast::flat_buffer& buffer, const Caller& caller,
                                                                      ApiRequest request, RunObserver* run_events = nullptr);
    // A streamed run: its events are written while it runs. False when the connection is done.
    net::awaitable<bool> serve_streamed_run(Stream& stream, beast::flat_buffer& buffer, const Caller& caller,
                                            ApiRequest request, unsigned version, bool keep_alive);

    net::any_io_executor executor;
    fs::path socket_path;
    ApiRouter router;
    HttpServerOptions options;
    Local::acceptor acceptor;
    std::list<ConnectionEntry*> connections;  // open connections, in the order they came; closed by stop()
    std::size_t starting = 0;                 // accepted, their coroutine not yet begun
    bool stopped = false;
};


Expected<void> HttpServer::Impl::start()
{
    const std::string shown = socket_path.string();
    if (options.activated_listener) {
        boost::system::error_code ec;
        acceptor.assign(Local(), *options.activated_listener, ec);
        if (ec)
            return make_error(api_error::k_socket_unusable,
                              "Cannot serve the socket the service manager passed for " + shown + ": " + ec.message() + ".");
        net::co_spawn(executor, accept_loop(), report_failure);
        return {};
    }
    Local::endpoint endpoint;
    try {
        endpoint = Local::endpoint(shown);
    } catch (const boost::system::system_error&) {
        return make_error(api_error::k_socket_unusable, shown + " is too long for a unix socket path.");
    }

    std::error_code fs_ec;
    const auto existing = fs::symlink_status(socket_path, fs_ec);
    if (fs::exists(existing)) {
        if (!fs::is_socket(existing))
            return make_error(api_error::k_socket_path_occupied, shown + " exists and is not a socket; remove it by hand.");
        Local::socket probe(executor);
        boost::system::error_code probe_ec;
        probe.connect(endpoint, probe_ec);
        if (!probe_ec)
            return make_error(api_error::k_daemon_already_running, "Another pyboxd is already listening on " + shown + ".");
        if (probe_ec != net::error::connection_refused)
            return make_error(api_error::k_socket_unusable, "Cannot tell whether " + shown + " is in use: " + probe_ec.message() + ".");
        fs::remove(socket_path, fs_ec);
        if (fs_ec) return make_error(api_error::k_socket_unusable, "Cannot remove the stale " + shown + ": " + fs_ec.message() + ".");
    }

    boost::system::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (ec) return make_error(api_error::k_socket_unusable, "Cannot bind " + shown + ": " + ec.message() + ".");
    // Owner mode: 0600. System mode: 0660 and the pybox group, whose members the peer check admits.
    const auto mode = options.socket_group ? fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                                 fs::perms::group_write
                                           : fs::perms::owner_read | fs::perms::owner_write;
    fs_ec.clear();
    if (options.socket_group && !set_file_group(socket_path, *options.socket_group))
        fs_ec = std::make_error_code(std::errc::operation_not_permitted);
    if (!fs_ec) fs::permissions(socket_path, mode, fs::perm_options::replace, fs_ec);
    if (!fs_ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (fs_ec || ec) {
        acceptor.close(ec);
        fs::remove(socket_path, fs_ec);
        return make_error(api_error::k_socket_unusable, "Cannot make " + shown + " private and listen on it.");
    }
    net::co_spawn(executor, accept_loop(), report_failure);
    return {};
}

void HttpServer::Impl::stop()
{
    if (stopped) return;
    stopped = true;
    boost::system::error_code ec;
    if (acceptor.is_open()) {
        acceptor.close(ec);
        std::error_code fs_ec;
        if (!options.activated_listener) fs::remove(socket_path, fs_ec);
    }
    while (!connections.empty()) connections.front()->close_and_unlist();
}

bool HttpServer::Impl::evict_oldest_idle()
{
    ConnectionEntry* oldest = nullptr;
    for (auto* connection : connections)
        if (connection->idle_since() && (!oldest || *connection->idle_since() < *oldest->idle_since()))
            oldest = connection;
    if (!oldest) return false;
    oldest->close_and_unlist();
    return true;
}

net::awaitable<void> HttpServer::Impl::accept_loop()
{
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(k_tuple);
        if (stopped || ec == net::error::operation_aborted) co_return;
        if (ec) {  // e.g. out of file descriptors: pause instead of spinning
            std::cerr << "pyboxd: accepting a connection failed: " << ec.message() << '\n';
            net::steady_timer pause(executor, k_accept_retry_pause);
            co_await pause.async_wait(k_tuple);
            continue;
        }
        if (connections.size() + starting >= options.max_connections && !evict_oldest_idle()) {
            refuse_connection(std::move(socket), options.max_connections);
            continue;
        }
        ++starting;
        net::co_spawn(executor, serve(std::move(socket)), report_failure);
    }
}

net::awaitable<void> HttpServer::Impl::serve(Local::socket socket)
{
    Stream stream(std::move(socket));
    ConnectionEntry entry(connections, stream.socket());
    --starting;
    const auto caller = admit_peer(options.mode, stream.socket().native_handle());
    if (!caller) {
        co_await write_response(stream, error_response(caller.error()), 11, false, options.response_write_timeout);
        co_return;
    }

    beast::flat_buffer buffer;
    for (;;) {
        if (buffer.size() == 0) {  // idle until the next request's first byte
            entry.mark_idle();
            stream.expires_after(options.idle_timeout);
            auto [ec, received] = co_await stream.async_read_some(buffer.prepare(k_read_chunk), k_tuple);
            if (ec) co_return;
            buffer.commit(received);
            entry.mark_busy();
        }
        RequestReader reader;
        stream.expires_after(options.request_read_timeout);
        if (!co_await read_request(stream, buffer, reader)) co_return;
        if (const auto& refusal = reader.refusal()) {
            co_await write_response(stream, error_response(*refusal), 11, false, options.response_write_timeout);
            co_return;
        }
        stream.expires_never();

        auto& message = reader.message();
        const bool keep_alive = message.keep_alive();
        const unsigned version = message.version();
        const bool streamed = wants_run_events(message);
        ApiRequest request{std::string(message.method_string()), std::string(message.target()),
                           std::move(message.body())};
        if (streamed) {
            if (!co_await serve_streamed_run(stream, buffer, *caller, std::move(request), version, keep_alive) ||
                !keep_alive)
                co_return;
            continue;
        }
        auto response = co_await handle_watching_client(stream, buffer, *caller, std::move(request));
        if (!response) co_return;
        if (!co_await write_response(stream, std::move(*response), version, keep_alive, options.response_write_timeout) ||
            !keep_alive)
            co_return;
    }
}

net::awaitable<std::optional<ApiResponse>> HttpServer::Impl::handle_watching_client(Stream& stream,
                                                                                    beast::flat_buffer& buffer,
                                                                                    const Caller& caller,
                                                                                    ApiRequest request,
                                                                                    RunObserver* run_events)
{
    using namespace net::experimental::awaitable_operators;
    net::cancellation_signal client_gone;
    bool gone = false;
    auto outcome = co_await (handle_answering_bugs(router, std::move(request), caller, client_gone.slot(), run_events) ||
                             watch_client(stream.socket(), buffer, client_gone, gone));
    if (gone) co_return std::nullopt;
    co_return std::get<0>(std::move(outcome));
}

net::awaitable<bool> HttpServer::Impl::serve_streamed_run(Stream& stream, beast::flat_buffer& buffer,
                                                          const Caller& caller, ApiRequest request, unsigned version,
                                                          bool keep_alive)
{
    using namespace net::experimental::awaitable_operators;
    StreamedAnswer answer(executor);
    bool ended = true;  // the run ended with an answer, not on the client's departure
    const auto run = [&]() -> net::awaitable<void> {
        auto response = co_await handle_watching_client(stream, buffer, caller, std::move(request), &answer);
        ended = response.has_value();
        answer.finish(response ? std::move(*response) : ApiResponse{});
    };
    // A client that stops reading is one that left: closing the socket ends the run as a
    // disconnect does (the watcher of the client sees it), and the box is removed.
    bool written = false;
    const auto write = [&]() -> net::awaitable<void> {
        written = co_await write_streamed(stream, answer, version, keep_alive, options.response_write_timeout);
        if (!written) {
            boost::system::error_code ec;
            stream.socket().close(ec);
        }
    };
    co_await (run() && write());
    co_return ended && written;
}

HttpServer::HttpServer(net::any_io_executor executor, fs::path socket_path, DaemonServices services,
                       HttpServerOptions options)
    : m_impl(std::make_unique<Impl>(std::move(executor), std::move(socket_path), services, options))
{
}

HttpServer::~HttpServer() = default;

Expected<void> HttpServer::start() { return m_impl->start(); }

void HttpServer::stop()
{
    net::dispatch(m_impl->executor, [impl = m_impl.get()] { impl->stop(); });
}

}  // namespace pybox::daemon
