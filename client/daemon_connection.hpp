// DaemonConnection: the client's side of the socket API (docs/api.md). Each call is one
// HTTP/1.1 exchange on a fresh connection to pyboxd's unix socket: synchronous (exchange, call:
// run on a private io_context so the caller never sees Asio) or as a coroutine on the caller's
// executor (exchange_async, call_async: `pybox mcp`). A coroutine's exchange ends on terminal
// cancellation (its error is then "daemon_io") and closes the connection, which for a run makes
// pyboxd stop it and remove its box.
//
// Timeouts: connect, write and read together must finish within the timeout given per call.
// Responses are read with a 32 MiB body limit. Failure: "daemon_not_running" (no socket, or
// nobody listening; the message says how to start pyboxd), "daemon_timeout", "daemon_lost" (the
// request was sent, then the connection broke before the answer: pyboxd may have acted on it),
// "daemon_io", or for a non-200 answer the daemon's own error (proto::parse_error_body).
#pragma once

#include "common/error.hpp"
#include "proto/run_events.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::client {

// How long `pybox version` and `pybox doctor` wait for GET /v1/ping: the daemon answers it at once.
inline constexpr std::chrono::seconds k_ping_timeout{5};

// Told each event of a streamed run before its answer: started and output (docs/api.md
// "Streamed runs"). Runs on the connection's thread or coroutine.
using RunEventHandler = std::function<void(const proto::RunEvent&)>;

struct DaemonReply {
    unsigned status = 0;
    std::string body;
    std::optional<std::string> receipt_not_kept;  // proto::k_receipt_not_kept_header, when sent
};

// The answer of POST /v1/runs, and why the daemon did not keep its receipt (absent: it did).
struct RunReply {
    boost::json::value answer;
    std::optional<std::string> receipt_not_kept;
};

// What call() answers, with the run's receipt_not_kept: for an exchange of POST /v1/runs.
Expected<RunReply> read_run_reply(const Expected<DaemonReply>& reply);

class DaemonConnection {
public:
    // The socket client_daemon_socket() chooses (common/paths.hpp): $PYBOX_HOME's, the
    // user's own daemon's, or the system daemon's.
    static Expected<DaemonConnection> from_environment();
    explicit DaemonConnection(std::filesystem::path socket) : m_socket(std::move(socket)) {}
    const std::filesystem::path& socket() const { return m_socket; }

    Expected<DaemonReply> exchange(std::string_view method, std::string_view target, std::string_view body,
                                   std::chrono::milliseconds timeout) const;
    // exchange(), then the JSON body of a 200 answer, or the daemon's error for any other.
    Expected<boost::json::value> call(std::string_view method, std::string_view target, std::string_view body,
                                      std::chrono::milliseconds timeout) const;
    boost::asio::awaitable<Expected<DaemonReply>> exchange_async(std::string method, std::string target,
                                                                 std::string body, std::chrono::milliseconds timeout) const;
    boost::asio::awaitable<Expected<boost::json::value>> call_async(std::string method, std::string target,
                                                                    std::string body,
                                                                    std::chrono::milliseconds timeout) const;

    // POST /v1/runs streamed (Accept: application/x-ndjson): each event before the receipt is
    // handed to `on_event` as it arrives, and the result is what read_run_reply() answers (the
    // receipt event's answer and receipt_not_kept, or the daemon's error). A daemon that answers
    // unstreamed is read as read_run_reply() reads it, with no event told. A line of the stream
    // that cannot be read is "daemon_io".
    Expected<RunReply> call_streamed(std::string_view target, std::string_view body, std::chrono::milliseconds timeout,
                                     const RunEventHandler& on_event) const;
    boost::asio::awaitable<Expected<RunReply>> call_streamed_async(std::string target, std::string body,
                                                                   std::chrono::milliseconds timeout,
                                                                   RunEventHandler on_event) const;

private:
    std::filesystem::path m_socket;
};

// What to tell the user when pyboxd does not answer; names the pyboxd binary when one is given.
std::string not_running_message(const std::optional<std::filesystem::path>& pyboxd);

}  // namespace pybox::client
