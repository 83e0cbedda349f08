// The protocol core of `pybox mcp` (docs/mcp.md): the Model Context Protocol's stdio transport
// (one JSON-RPC 2.0 message per line) and its session rules, without the tools and without I/O.
// Pure: the server (client/mcp/mcp.cpp) feeds it the bytes of stdin and writes what it answers.
//
// Rules (MCP revision 2025-11-25, JSON-RPC 2.0):
// - A line (without its "\n", a trailing "\r" dropped) is at most limits::k_mcp_max_message_bytes;
//   a longer one is refused (-32600, id null) and skipped to its end; blank lines are ignored.
// - A message is one JSON object, parsed strictly (proto::parse_request_json: no repeated key,
//   bounded depth): malformed JSON is -32700 with id null; an array (a batch) or any other shape
//   is -32600. Keys: "jsonrpc" ("2.0"), "id" (string or integer), "method", "params" (object);
//   any other key is refused. A message with "result" or "error" and no method is a response to
//   a request this server never sends: it is ignored.
// - Notifications are never answered (not even when malformed). notifications/initialized is
//   noted, notifications/cancelled names a call to stop, any other is ignored.
// - Before initialize has been answered only initialize and ping are served (-32600 otherwise);
//   initialize is served once. Version negotiation: a supported revision asked for is echoed,
//   anything else is answered with the latest (k_latest_version).
// - Methods: initialize, ping, tools/list, tools/call; anything else (server/discover included)
//   is -32601. tools/call of a tool not in the list is -32602; its arguments are the tool's business.
// - Session caps: the (k_mcp_max_messages + 1)th message and every one after it is refused (a
//   request gets -32000 saying so; notifications/cancelled is still honoured), and so is the
//   (k_mcp_max_calls + 1)th tools/call.
// - A call's id must not be one of the calls still running (-32600). Once cancelled, a call is
//   never answered.
// - A response line is at most limits::k_mcp_max_response_bytes: a tool result that would be
//   larger is replaced by a tool error saying so.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::client::mcp {

inline constexpr std::string_view k_latest_version = "2025-11-25";
// The revisions this server speaks, newest first.
inline constexpr std::string_view k_supported_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
// The answer to a client that asks for `requested`.
std::string_view negotiate_version(std::string_view requested);

// JSON-RPC error codes used here.
inline constexpr int k_parse_error = -32700;
inline constexpr int k_invalid_request = -32600;
inline constexpr int k_method_not_found = -32601;
inline constexpr int k_invalid_params = -32602;
// Server-defined: a session cap was reached.
inline constexpr int k_session_cap_reached = -32000;

// Splits a byte stream into lines of at most `max_line_bytes`. A longer line is reported once as
// oversized when its end arrives, and its bytes are not kept. Pure.
class LineSplitter {
public:
    explicit LineSplitter(std::size_t max_line_bytes) : m_max_line_bytes(max_line_bytes) {}

    struct Line {
        std::string text;  // without "\n" (and without a trailing "\r")
        bool oversized = false;
    };
    // Appends `bytes`; returns the lines they complete.
    std::vector<Line> feed(std::string_view bytes);

private:
    std::size_t m_max_line_bytes;
    std::string m_partial;
    bool m_discarding = false;
};

// A tools/call to run: the server runs it and hands its result to Session::finish_call.
struct ToolCall {
    boost::json::value id;
    std::string name;
    boost::json::object arguments;
    // params._meta.progressToken when the client sent one (a string or an integer; any other
    // value is ignored): the call may then send notifications/progress.
    std::optional<boost::json::value> progress_token;
};

// What to do about one incoming line: at most one of these is set.
struct Reaction {
    std::optional<std::string> reply;          // a JSON-RPC response to write (one line, no "\n")
    std::optional<ToolCall> call;              // a call to start
    std::optional<boost::json::value> cancel;  // the id of a running call to stop (not answered)
};

struct ServerInfo {
    std::string name;
    std::string version;
    std::string instructions;
};

class Session {
public:
    // `tools`: the tools/list entries (each an object with at least "name").
    Session(ServerInfo info, boost::json::array tools);

    Reaction on_line(const LineSplitter::Line& line);
    // The response line for a finished call, or nothing when the call was cancelled (or is
    // unknown). `result`: a CallToolResult object.
    std::optional<std::string> finish_call(const boost::json::value& id, boost::json::object result);

    bool initialized() const { return m_initialized; }
    std::size_t running_calls() const { return m_running.size(); }

private:
    Reaction on_message(std::string_view text);
    Reaction on_request(const boost::json::value& id, std::string_view method, const boost::json::object& params);
    void on_notification(std::string_view method, const boost::json::object& params, Reaction& reaction);
    std::string initialize(const boost::json::value& id, const boost::json::object& params);
    bool is_running(const boost::json::value& id) const;

    ServerInfo m_info;
    boost::json::array m_tools;
    bool m_initialized = false;
    std::size_t m_messages = 0;
    std::size_t m_calls = 0;
    std::vector<boost::json::value> m_running;
};

// Response lines (no "\n").
std::string result_line(const boost::json::value& id, boost::json::value result);
std::string error_line(const boost::json::value& id, int code, std::string_view message);
// A CallToolResult that reports a failure to the model: one text block, isError true.
boost::json::object tool_error(std::string_view message);

}  // namespace pybox::client::mcp
