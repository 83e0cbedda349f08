// `pybox mcp`: the MCP server on stdio (docs/mcp.md). One io_context: stdin is read
// asynchronously and split into messages (client/mcp/mcp_protocol.hpp), each tools/call runs as its
// own coroutine against pyboxd (client/mcp/mcp_tools.hpp), so ping and notifications/cancelled are
// served while calls run; the daemon queues the runs. stdout carries only the JSON-RPC lines,
// logs go to stderr. On stdin's end the calls still running are answered, then the server exits
// 0; on SIGTERM or SIGINT it exits 0 at once, cancelling the running calls (their connections
// closed, so pyboxd stops their runs and removes the boxes).
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"
#include "client/mcp/mcp_protocol.hpp"
#include "client/mcp/mcp_tools.hpp"
#include "client/unsealed/unsealed_run.hpp"

#include "common/limits.hpp"
#include "common/version.hpp"
#include "proto/answers.hpp"
#include "proto/api.hpp"
#include "proto/run_answer.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <map>
#include <memory>

namespace pybox::client {

namespace {

namespace net = boost::asio;
namespace json = boost::json;

constexpr std::size_t k_read_chunk_bytes = 64 * 1024;
constexpr std::chrono::seconds k_list_images_timeout{10};
constexpr std::string_view k_instructions =
    "run_python runs a Python 3 program in a fresh sealed container and returns its output and a receipt. "
    "Each call is a new container: nothing persists between calls. Pass input files in `files`; write files "
    "to out/ to get them back. list_images names the images run_python can use.";

constexpr std::string_view k_unsealed_instructions =
    " run_python_unsealed (offered because pybox mcp was started with --allow-unsealed) runs the program "
    "WITHOUT a container, with the host's python as this user: prefer run_python.";

void log(std::string_view line)
{
    write_bytes(stderr, "pybox mcp: " + std::string(line) + "\n");
}

class McpServer {
public:
    explicit McpServer(bool allow_unsealed)
        : m_session({"pybox", pybox::version(),
                     std::string(k_instructions) + (allow_unsealed ? std::string(k_unsealed_instructions) : "")},
                    mcp::tool_definitions(allow_unsealed)),
          m_lines(limits::k_mcp_max_message_bytes)
    {
    }

    int run()
    {
        boost::system::error_code ec;
        const int input = ::dup(STDIN_FILENO);
        if (input >= 0) m_input.assign(input, ec);
        if (input < 0 || ec) {
            if (input >= 0) ::close(input);
            log("standard input cannot be read asynchronously (it must be a pipe or a socket): " + ec.message());
            return k_exit_pybox_failed;
        }
        m_signals.async_wait([this](const boost::system::error_code& error, int signal) {
            if (error) return;
            log(std::string("stopping on ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT"));
            m_cancelled = true;
            for (auto& [key, call] : m_running) call->emit(net::cancellation_type::terminal);
            close_input();
        });
        net::co_spawn(m_io, read_messages(), net::detached);
        log("serving MCP on stdio (revision " + std::string(mcp::k_latest_version) + "; pyboxd at " +
            (m_daemon ? m_daemon->socket().string() : std::string("an unknown socket")) + ")");
        m_io.run();
        return 0;
    }

private:
    net::awaitable<void> read_messages()
    {
        std::string buffer(k_read_chunk_bytes, '\0');
        while (m_input.is_open()) {
            boost::system::error_code ec;
            const auto read = co_await m_input.async_read_some(net::buffer(buffer), net::redirect_error(net::use_awaitable, ec));
            if (ec) {
                if (m_input.is_open())
                    log(ec == net::error::eof ? "standard input ended" : "standard input failed: " + ec.message());
                close_input();
                co_return;
            }
            for (const auto& line : m_lines.feed(std::string_view(buffer.data(), read))) handle(line);
        }
    }

    void handle(const mcp::LineSplitter::Line& line)
    {
        auto reaction = m_session.on_line(line);
        if (reaction.reply) send(*reaction.reply);
        if (reaction.cancel) cancel(*reaction.cancel);
        if (reaction.call) start(std::move(*reaction.call));
    }

    void send(const std::string& line) { write_bytes(stdout, line + "\n"); }

    void start(mcp::ToolCall call)
    {
        const auto key = json::serialize(call.id);
        auto signal = std::make_shared<net::cancellation_signal>();
        m_running[key] = signal;
        net::co_spawn(m_io, serve(std::move(call)),
                      net::bind_cancellation_slot(signal->slot(), [this, key, signal](std::exception_ptr) {
                          m_running.erase(key);
                          if (!m_input.is_open() && m_running.empty()) m_signals.cancel();
                      }));
    }

    void cancel(const json::value& id)
    {
        const auto found = m_running.find(json::serialize(id));
        if (found == m_running.end()) return;
        log("call " + found->first + " cancelled by the client; closing its connection to pyboxd");
        found->second->emit(net::cancellation_type::terminal);
    }

    net::awaitable<void> serve(mcp::ToolCall call)
    {
        json::object result;
        try {
            if (call.name == mcp::k_run_python)
                result = co_await run_python(call.arguments, call.progress_token);
            else if (call.name == mcp::k_run_python_unsealed)
                result = co_await run_python_unsealed(call.arguments);
            else
                result = co_await list_images();
        } catch (const std::exception& error) {
            // A bug, or the cancellation of a call that is no longer answered anyway.
            result = mcp::tool_error(std::string("pybox mcp failed internally: ") + error.what());
        }
        if (m_cancelled) co_return;
        if (auto line = m_session.finish_call(call.id, std::move(result))) send(*line);
    }

    // With a progress token, the run is streamed and its output told as it comes
    // (mcp::ProgressReporter); the result is the same either way.
    net::awaitable<json::object> run_python(const json::object& arguments, std::optional<json::value> progress_token)
    {
        auto request = mcp::run_python_request(arguments);
        if (!request) co_return mcp::tool_error("Invalid arguments: " + request.error().message);
        if (!m_daemon) co_return mcp::failed_call_result(m_daemon.error());
        const auto budget = mcp::supervisor_budget(request->timeout_s);
        std::string body = proto::serialize_run_request(*request);
        Expected<RunReply> answer = make_error("daemon_io", "The run was not sent.");
        if (progress_token) {
            auto reporter = std::make_shared<mcp::ProgressReporter>(std::move(*progress_token));
            auto tell = [this, reporter](const proto::RunEvent& event) {
                if (m_cancelled) return;
                if (auto line = reporter->line_for(event)) send(*line);
            };
            answer = co_await m_daemon->call_streamed_async("/v1/runs", std::move(body), budget, std::move(tell));
        } else {
            answer = read_run_reply(co_await m_daemon->exchange_async("POST", "/v1/runs", std::move(body), budget));
        }
        if (!answer && answer.error().code == "daemon_timeout")
            co_return mcp::failed_call_result(make_error(
                "supervisor_budget_spent",
                "pyboxd did not answer within this call's budget of " + std::to_string(budget.count() / 1000) +
                    " s; the connection was closed, so pyboxd stops the run and removes its box."));
        if (!answer && answer.error().code == "daemon_lost")
            co_return mcp::failed_call_result(make_error("daemon_lost", lost_daemon_message(answer.error().message)));
        if (!answer) co_return mcp::failed_call_result(answer.error());
        auto run = proto::run_answer_from_json(answer->answer, util::ReadMode::tolerant, true);
        if (!run) co_return mcp::failed_call_result(make_error("daemon_io", "The daemon's answer cannot be read: " + run.error().message));
        run->receipt_not_kept = answer->receipt_not_kept;
        log("run " + run->receipt.identity.run_id.substr(0, 8) + " answered");
        co_return mcp::run_python_result(*run);
    }

    // Only listed, and so only called, with --allow-unsealed (Session refuses unknown tools). The
    // run blocks a thread for at most its deadline, so it goes to m_unsealed_runner (one run at a
    // time) and the io_context keeps serving; it cannot be cancelled before its deadline.
    net::awaitable<json::object> run_python_unsealed(const json::object& arguments)
    {
        auto request = mcp::run_python_unsealed_request(arguments);
        if (!request) co_return mcp::tool_error("Invalid arguments: " + request.error().message);
        // Named, not a temporary in the co_await: GCC 12 destroys such a temporary twice.
        auto work = [unsealed_request = unsealed::UnsealedRequest{request->source, request->timeout_s,
                                                                  request->output_limit_bytes}]()
            -> net::awaitable<Expected<proto::Receipt>> { co_return unsealed::run_unsealed(unsealed_request); };
        auto receipt = co_await net::co_spawn(m_unsealed_runner, std::move(work), net::use_awaitable);
        if (!receipt) co_return mcp::failed_call_result(receipt.error());
        log("unsealed run " + receipt->identity.run_id.substr(0, 8) + " answered");
        co_return mcp::run_python_result(proto::RunAnswer{std::move(*receipt), {}, std::nullopt});
    }

    net::awaitable<json::object> list_images()
    {
        if (!m_daemon) co_return mcp::failed_call_result(m_daemon.error());
        auto answer = co_await m_daemon->call_async("GET", "/v1/images", "", k_list_images_timeout);
        auto images = read_answer(answer, &proto::image_list_from_json);
        if (!images) co_return mcp::failed_call_result(images.error());
        co_return mcp::list_images_result(*images);
    }

    // No more messages; the server ends once the running calls are done.
    void close_input()
    {
        boost::system::error_code ignored;
        m_input.close(ignored);
        if (m_running.empty()) m_signals.cancel();
    }

    net::io_context m_io;
    net::thread_pool m_unsealed_runner{1};
    net::posix::stream_descriptor m_input{m_io};
    net::signal_set m_signals{m_io, SIGINT, SIGTERM};
    mcp::Session m_session;
    mcp::LineSplitter m_lines;
    Expected<DaemonConnection> m_daemon = DaemonConnection::from_environment();
    std::map<std::string, std::shared_ptr<net::cancellation_signal>> m_running;
    bool m_cancelled = false;  // by a signal: nothing more is written
};

}  // namespace

Action configure_mcp(CLI::App& command)
{
    auto allow_unsealed = std::make_shared<bool>(false);
    command.add_flag("--allow-unsealed", *allow_unsealed,
                     "Also offer run_python_unsealed: runs programs WITHOUT a container, with the host's python as "
                     "you (docs/unsealed.md). Off unless given");
    command.footer("Speaks the Model Context Protocol on stdin/stdout for AI agents (see docs/mcp.md); needs pyboxd.");
    return [allow_unsealed] {
        McpServer server(*allow_unsealed);
        return server.run();
    };
}

}  // namespace pybox::client
