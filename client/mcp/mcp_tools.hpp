// The tools of `pybox mcp` (docs/mcp.md): their definitions for tools/list (inputSchema and
// outputSchema, JSON Schema), the reading of their arguments, and the CallToolResult made from
// the daemon's answer. Pure: the server (client/mcp/mcp.cpp) does the talking to pyboxd.
//
// run_python: arguments "program" (string, required, at most limits::k_max_source_bytes bytes),
// "timeout_s" (number 0.1-30, default 2), "image" (string, default "stdlib"), "files" (object:
// name -> {"text": string} or {"base64": string}; at most limits::k_mcp_max_input_files files,
// limits::k_mcp_max_input_bytes bytes in all, names as proto/files.hpp says), "output_limit"
// (integer 1-limits::k_mcp_max_output_limit_bytes, default limits::k_mcp_default_output_limit_bytes).
// Every run moves files: the inputs are placed in the program's working folder, and what it
// leaves in out/ comes back.
//
// isError: false whenever the daemon answered with a receipt (the program ran, or was stopped,
// or the run failed after its identity was made: the receipt says how it ended); true when
// nothing ran (bad arguments, the daemon's refusal, the daemon unreachable, the supervisor's
// budget spent) and then the result has no structuredContent.
//
// run_python_unsealed (only with `pybox mcp --allow-unsealed`; docs/unsealed.md): "program",
// "timeout_s" and "output_limit" as run_python's, no image and no files; runs the host's python
// without a container (client/unsealed/unsealed_run.hpp) and answers as run_python does, its
// receipt marked sealed false. Without the flag it is not listed, and a call of it is refused as
// an unknown tool.
//
// A run's result: structuredContent is the receipt (the layout of `pybox exec --json`), its
// serialized size at most limits::k_mcp_max_receipt_bytes (stdout and stderr cut to the longest
// common length that fits, never inside a UTF-8 character, and the cut noted in the receipt's
// explanations as MCP_OUTPUT_TRIMMED); content holds a text
// block with the short view and the serialized receipt, then the output files' contents in name
// order while they fit in limits::k_mcp_max_output_content_bytes (and the response cap): a PNG
// as an `image`, UTF-8 text as an embedded text resource, other bytes as a base64 blob; a last
// text block names the files whose contents were left out (the receipt lists them all).
#pragma once

#include "common/error.hpp"
#include "proto/answers.hpp"
#include "proto/run_answer.hpp"
#include "proto/run_events.hpp"
#include "proto/run_request.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::client::mcp {

inline constexpr std::string_view k_run_python = "run_python";
inline constexpr std::string_view k_list_images = "list_images";
inline constexpr std::string_view k_run_python_unsealed = "run_python_unsealed";
// The explanation code of a receipt whose output was trimmed to fit.
inline constexpr std::string_view k_output_trimmed_code = "MCP_OUTPUT_TRIMMED";

// run_python and list_images, and run_python_unsealed only when `allow_unsealed`.
boost::json::array tool_definitions(bool allow_unsealed = false);

// run_python's arguments as a run request (validated as the daemon would); an error's message
// says which argument and rule.
Expected<proto::RunRequest> run_python_request(const boost::json::object& arguments);
// run_python_unsealed's arguments as a request (no image, no files).
Expected<proto::RunRequest> run_python_unsealed_request(const boost::json::object& arguments);
// How long the server waits for the daemon's answer to a run with this deadline: 45 s up to a
// 2 s deadline; above it, 2 x deadline + limits::k_daemon_run_worst_case_margin + 5 s.
std::chrono::milliseconds supervisor_budget(double timeout_s);

// The receipt as delivered: trimmed to limits::k_mcp_max_receipt_bytes serialized.
proto::Receipt fit_receipt(proto::Receipt receipt);
boost::json::object run_python_result(const proto::RunAnswer& answer);
boost::json::object list_images_result(const proto::ImageList& images);
// A tool error for what stopped a call before any receipt: "<what failed>: <message>".
boost::json::object failed_call_result(const Error& error);

// Live output (docs/mcp.md "Live output"): the notifications/progress lines of a run_python call
// that carried a progress token, one per event of its streamed run. "progress" counts the output
// bytes told so far (0 at the start), "message" says "started run ID" or carries the new output
// after "stdout: " or "stderr: " (as UTF-8, an invalid byte becoming U+FFFD), cut to
// limits::k_mcp_max_progress_message_bytes of output on a character boundary; after
// limits::k_mcp_max_progress_notifications lines nothing more is told. The result is unchanged:
// it carries the whole output. Pure.
class ProgressReporter {
public:
    explicit ProgressReporter(boost::json::value token) : m_token(std::move(token)) {}
    // The line (no "\n") to send for `event`, or nothing.
    std::optional<std::string> line_for(const proto::RunEvent& event);

private:
    boost::json::value m_token;
    std::size_t m_sent = 0;
    std::uint64_t m_output_bytes = 0;
};

}  // namespace pybox::client::mcp
