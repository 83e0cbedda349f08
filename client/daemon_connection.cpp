#include "client/daemon_connection.hpp"

#include "common/api_error_codes.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "common/version.hpp"
#include "proto/api.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <exception>
#include <memory>

namespace pybox::client {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace fs = std::filesystem;
using Local = net::local::stream_protocol;
using Stream = beast::basic_stream<Local, net::any_io_executor, beast::unlimited_rate_policy>;

namespace {

constexpr auto k_tuple = net::as_tuple(net::use_awaitable);
constexpr std::uint64_t k_max_response_bytes = 32 * 1024 * 1024;
// Boost.JSON's own default nesting bound, which the client read answers with before.
constexpr std::size_t k_max_answer_depth = 32;

// pyboxd when it sits next to this program.
std::optional<fs::path> sibling_pyboxd()
{
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    return find_executable("pyboxd", {self.parent_path()});
}

Error transport_error(const boost::system::error_code& ec, std::string_view doing)
{
    if (ec == beast::error::timeout)
        return make_error("daemon_timeout", "pyboxd did not answer in time (while " + std::string(doing) + ").");
    return make_error("daemon_io", "The connection to pyboxd failed while " + std::string(doing) + ": " +
                                       ec.message() + ".");
}

// The daemon's end of the connection closed (it exited, or was killed) before a whole answer.
bool connection_lost(const boost::system::error_code& ec)
{
    return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == net::error::eof ||
           ec == net::error::connection_reset || ec == net::error::broken_pipe;
}

http::request<http::string_body> make_request(std::string_view method, std::string_view target, std::string_view body,
                                              std::string_view accept = "application/json")
{
    http::request<http::string_body> request{http::string_to_verb(method), target, 11};
    request.set(http::field::host, proto::k_host);
    request.set(http::field::user_agent, "pybox/" + pybox::version());
    request.set(http::field::accept, accept);
    if (!body.empty()) request.set(http::field::content_type, "application/json");
    request.body() = std::string(body);
    request.prepare_payload();
    return request;
}

// Connects `stream` (its deadline already set) to pyboxd's socket.
net::awaitable<Expected<void>> connect_to(Stream& stream, const fs::path& socket)
{
    auto [connect_ec] = co_await stream.async_connect(Local::endpoint(socket.string()), k_tuple);
    if (connect_ec == net::error::connection_refused || connect_ec == boost::system::errc::no_such_file_or_directory)
        co_return make_error("daemon_not_running", not_running_message(sibling_pyboxd()));
    if (connect_ec == boost::system::errc::permission_denied)
        co_return make_error(api_error::k_forbidden, "You may not use " + socket.string() + " (permission denied). The system "
                                          "pyboxd serves root and the members of the pybox group: ask an "
                                          "administrator to add you (adduser USER pybox), then log in again.");
    if (connect_ec) co_return transport_error(connect_ec, "connecting to " + socket.string());
    co_return Expected<void>{};
}

// The error of a read of the answer that failed; `write_ec` is the sending's.
Error read_failure(const boost::system::error_code& read_ec, const boost::system::error_code& write_ec)
{
    if (connection_lost(read_ec))
        return make_error("daemon_lost", "pyboxd went away after it took the request (the connection broke while "
                                         "reading the answer: " + read_ec.message() + ").");
    return write_ec ? transport_error(write_ec, "sending the request") : transport_error(read_ec, "reading the answer");
}

// The status, body and receipt_not_kept header of a whole answer.
DaemonReply reply_of(http::response_parser<http::string_body>& parser)
{
    DaemonReply reply{parser.get().result_int(), std::move(parser.get().body()), std::nullopt};
    if (const auto header = parser.get().find(proto::k_receipt_not_kept_header); header != parser.get().end())
        reply.receipt_not_kept = std::string(header->value());
    return reply;
}

// A request sent on a connection of its own, the whole exchange under `timeout`; its answer is
// read from `parser` next.
struct SentRequest {
    explicit SentRequest(const net::any_io_executor& executor) : stream(executor) {}
    Stream stream;
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    boost::system::error_code write_ec;  // the sending's
};

net::awaitable<Expected<std::unique_ptr<SentRequest>>> send_request(fs::path socket,
                                                                    http::request<http::string_body> request,
                                                                    std::chrono::milliseconds timeout)
{
    auto sent = std::make_unique<SentRequest>(co_await net::this_coro::executor);
    sent->stream.expires_after(timeout);
    if (auto connected = co_await connect_to(sent->stream, socket); !connected) co_return connected.error();
    // A daemon with no room for the connection answers 503 and closes it without reading the
    // request, so when sending fails the answer may be waiting all the same: read it.
    auto [write_ec, written] = co_await http::async_write(sent->stream, request, k_tuple);
    sent->write_ec = write_ec;
    sent->parser.body_limit(k_max_response_bytes);
    co_return std::move(sent);
}

net::awaitable<Expected<DaemonReply>> exchange_on(fs::path socket, http::request<http::string_body> request,
                                                  std::chrono::milliseconds timeout)
{
    auto sent = co_await send_request(std::move(socket), std::move(request), timeout);
    if (!sent) co_return sent.error();
    auto& [stream, buffer, parser, write_ec] = **sent;
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, k_tuple);
    if (read_ec) co_return read_failure(read_ec, write_ec);
    co_return reply_of(parser);
}

// The JSON body of a 200 answer, or the daemon's error for any other.
Expected<json::value> read_reply(const Expected<DaemonReply>& reply)
{
    if (!reply) return reply.error();
    if (reply->status != 200) return proto::parse_error_body(reply->status, reply->body);
    // Read strictly, so that doubles read back exactly as pyboxd wrote them (a receipt printed
    // with --json then canonicalizes as pyboxd signed it).
    auto document = util::parse_json_strictly(reply->body, k_max_answer_depth);
    if (!document.ok())
        return make_error("daemon_io", "pyboxd answered with JSON that cannot be read: " +
                                           (document.duplicate_key ? "it repeats the key \"" + util::printable_excerpt(*document.duplicate_key) + "\""
                                                                   : document.problem) + ".");
    return std::move(document.value);
}

// The events of a streamed run, line by line, as its body arrives: each one before the receipt
// goes to `on_event`; the receipt's answer (or the error event's error) ends the exchange.
class EventLines {
public:
    explicit EventLines(const RunEventHandler& on_event) : m_on_event(on_event) {}

    // Takes the complete lines at the front of `body` out of it. False once a line is unreadable
    // or comes after the end; the outcome then says why.
    bool take(std::string& body)
    {
        std::size_t start = 0;
        for (std::size_t end; (end = body.find('\n', start)) != std::string::npos; start = end + 1)
            if (!take_line(std::string_view(body).substr(start, end - start))) return false;
        body.erase(0, start);
        return true;
    }

    // At the end of the body: the answer, or why there is none.
    Expected<RunReply> outcome(const std::string& rest)
    {
        if (m_outcome) return std::move(*m_outcome);
        return make_error("daemon_io", rest.empty() ? "pyboxd's stream of the run ended without its receipt."
                                                    : "pyboxd's stream of the run ended inside a line.");
    }

private:
    bool take_line(std::string_view line)
    {
        if (m_outcome) {
            m_outcome = make_error("daemon_io", "pyboxd's stream of the run goes on after its receipt.");
            return false;
        }
        // Tolerant: a newer daemon may add keys and events; an unknown event is skipped.
        auto event = proto::parse_run_event(line, util::ReadMode::tolerant);
        if (!event) {
            m_outcome = make_error("daemon_io", event.error().message);
            return false;
        }
        using Kind = proto::RunEvent::Kind;
        if (event->kind == Kind::receipt) m_outcome = RunReply{std::move(event->answer), std::move(event->receipt_not_kept)};
        else if (event->kind == Kind::error) m_outcome = make_error(event->error.code, event->error.message);
        else if (event->kind != Kind::unknown) m_on_event(*event);
        return true;
    }

    const RunEventHandler& m_on_event;
    std::optional<Expected<RunReply>> m_outcome;
};

net::awaitable<Expected<RunReply>> streamed_call_on(fs::path socket, http::request<http::string_body> request,
                                                       std::chrono::milliseconds timeout, const RunEventHandler& on_event)
{
    auto sent = co_await send_request(std::move(socket), std::move(request), timeout);
    if (!sent) co_return sent.error();
    auto& [stream, buffer, parser, write_ec] = **sent;
    auto [head_ec, head_bytes] = co_await http::async_read_header(stream, buffer, parser, k_tuple);
    if (head_ec) co_return read_failure(head_ec, write_ec);
    const bool streamed = parser.get().result_int() == 200 &&
                          parser.get()[http::field::content_type] == proto::k_run_events_media_type;
    if (!streamed) {  // an error, or a daemon that does not stream: the whole answer
        auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, k_tuple);
        if (read_ec) co_return read_failure(read_ec, write_ec);
        co_return read_run_reply(reply_of(parser));
    }
    EventLines lines(on_event);
    while (lines.take(parser.get().body()) && !parser.is_done()) {
        auto [read_ec, read] = co_await http::async_read_some(stream, buffer, parser, k_tuple);
        if (read_ec) co_return read_failure(read_ec, write_ec);
    }
    co_return lines.outcome(parser.get().body());
}

}  // namespace

Expected<RunReply> read_run_reply(const Expected<DaemonReply>& reply)
{
    auto answer = read_reply(reply);
    if (!answer) return answer.error();
    return RunReply{std::move(*answer), reply->receipt_not_kept};
}

std::string not_running_message(const std::optional<fs::path>& pyboxd)
{
    return "pyboxd is not running. Start it with: " + (pyboxd ? pyboxd->string() : std::string("pyboxd")) +
           " &   (or, as a service: systemctl --user start pyboxd)";
}

Expected<DaemonConnection> DaemonConnection::from_environment()
{
    auto socket = client_daemon_socket();
    if (!socket) return socket.error();
    return DaemonConnection(*socket);
}

Expected<DaemonReply> DaemonConnection::exchange(std::string_view method, std::string_view target,
                                                 std::string_view body, std::chrono::milliseconds timeout) const
{
    net::io_context io;
    Expected<DaemonReply> outcome = make_error("daemon_io", "The exchange with pyboxd did not finish.");
    net::co_spawn(io, exchange_async(std::string(method), std::string(target), std::string(body), timeout),
                  [&](std::exception_ptr, Expected<DaemonReply> reply) { outcome = std::move(reply); });
    io.run();
    return outcome;
}

net::awaitable<Expected<DaemonReply>> DaemonConnection::exchange_async(std::string method, std::string target,
                                                                       std::string body,
                                                                       std::chrono::milliseconds timeout) const
{
    const auto socket = m_socket;
    try {
        co_return co_await exchange_on(socket, make_request(method, target, body), timeout);
    } catch (const std::exception& error) {
        co_return make_error("daemon_io", "Cannot talk to pyboxd at " + socket.string() + ": " + error.what());
    }
}

Expected<json::value> DaemonConnection::call(std::string_view method, std::string_view target, std::string_view body,
                                             std::chrono::milliseconds timeout) const
{
    return read_reply(exchange(method, target, body, timeout));
}

net::awaitable<Expected<json::value>> DaemonConnection::call_async(std::string method, std::string target,
                                                                   std::string body,
                                                                   std::chrono::milliseconds timeout) const
{
    auto reply = co_await exchange_async(std::move(method), std::move(target), std::move(body), timeout);
    co_return read_reply(reply);
}


Expected<RunReply> DaemonConnection::call_streamed(std::string_view target, std::string_view body,
                                                   std::chrono::milliseconds timeout,
                                                   const RunEventHandler& on_event) const
{
    net::io_context io;
    Expected<RunReply> outcome = make_error("daemon_io", "The exchange with pyboxd did not finish.");
    net::co_spawn(io, call_streamed_async(std::string(target), std::string(body), timeout, on_event),
                  [&](std::exception_ptr, Expected<RunReply> answer) { outcome = std::move(answer); });
    io.run();
    return outcome;
}

net::awaitable<Expected<RunReply>> DaemonConnection::call_streamed_async(std::string target, std::string body,
                                                                         std::chrono::milliseconds timeout,
                                                                         RunEventHandler on_event) const
{
    const auto socket = m_socket;
    try {
        co_return co_await streamed_call_on(socket, make_request("POST", target, body, proto::k_run_events_media_type),
                                            timeout, on_event);
    } catch (const std::exception& error) {
        co_return make_error("daemon_io", "Cannot talk to pyboxd at " + socket.string() + ": " + error.what());
    }
}

}  // namespace pybox::client
