#include "client/mcp/mcp_protocol.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "proto/request_json.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>

namespace pybox::client::mcp {

namespace json = boost::json;

namespace {

const json::value k_null_id = nullptr;

Reaction answer(std::string line)
{
    Reaction reaction;
    reaction.reply = std::move(line);
    return reaction;
}

bool valid_id(const json::value& id)
{
    return id.is_string() || id.is_int64() || id.is_uint64();
}

// Whether `object` has only keys from `allowed`; names the first other one in `stray`.
bool only_keys(const json::object& object, std::initializer_list<std::string_view> allowed, std::string& stray)
{
    for (const auto& entry : object) {
        if (std::find(allowed.begin(), allowed.end(), std::string_view(entry.key())) == allowed.end()) {
            stray = entry.key();
            return false;
        }
    }
    return true;
}

std::string cap_message(std::string_view what, std::size_t cap)
{
    return "This session reached its cap of " + std::to_string(cap) + " " + std::string(what) +
           "; nothing more is served in it. Start a new session (restart the server) to go on.";
}

}  // namespace

std::string_view negotiate_version(std::string_view requested)
{
    for (const auto version : k_supported_versions)
        if (version == requested) return version;
    return k_latest_version;
}

std::vector<LineSplitter::Line> LineSplitter::feed(std::string_view bytes)
{
    std::vector<Line> lines;
    while (!bytes.empty()) {
        const auto newline = bytes.find('\n');
        const auto piece = bytes.substr(0, newline);
        if (!m_discarding) {
            m_partial.append(piece.substr(0, std::min(piece.size(), m_max_line_bytes + 2 - m_partial.size())));
            // One byte more than the cap, plus room for a "\r" before the newline.
            if (m_partial.size() > m_max_line_bytes + 1) m_discarding = true;
        }
        if (newline == std::string_view::npos) break;
        bytes.remove_prefix(newline + 1);
        if (!m_discarding && !m_partial.empty() && m_partial.back() == '\r') m_partial.pop_back();
        if (m_discarding || m_partial.size() > m_max_line_bytes)
            lines.push_back({"", true});
        else
            lines.push_back({std::move(m_partial), false});
        m_partial.clear();
        m_discarding = false;
    }
    return lines;
}

std::string result_line(const json::value& id, json::value result)
{
    return json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

std::string error_line(const json::value& id, int code, std::string_view message)
{
    return json::serialize(
        json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", message}}}});
}

json::object tool_error(std::string_view message)
{
    return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", message}}}}, {"isError", true}};
}

Session::Session(ServerInfo info, json::array tools) : m_info(std::move(info)), m_tools(std::move(tools)) {}

Reaction Session::on_line(const LineSplitter::Line& line)
{
    if (!line.oversized && line.text.find_first_not_of(" \t\r") == std::string::npos) return {};
    if (++m_messages > limits::k_mcp_max_messages) {
        // Only a request can be answered, so only a readable one is.
        if (line.oversized) return {};
        auto document = proto::parse_request_json(line.text);
        if (!document || !document->is_object()) return {};
        const auto* id = document->as_object().if_contains("id");
        const auto* method = document->as_object().if_contains("method");
        // Stopping a call is still honoured: it only takes work away.
        if (!id && method && *method == "notifications/cancelled") return on_message(line.text);
        if (!id || !valid_id(*id) || !method) return {};
        return answer(error_line(*id, k_session_cap_reached, cap_message("messages", limits::k_mcp_max_messages)));
    }
    if (line.oversized)
        return answer(error_line(k_null_id, k_invalid_request,
                           "Message refused: a message is at most " + std::to_string(limits::k_mcp_max_message_bytes) +
                               " bytes on one line."));
    return on_message(line.text);
}

Reaction Session::on_message(std::string_view text)
{
    auto document = proto::parse_request_json(text);
    if (!document) {
        if (document.error().code == api_error::k_invalid_json)
            return answer(error_line(k_null_id, k_parse_error, "Parse error: " + document.error().message));
        return answer(error_line(k_null_id, k_invalid_request, "Invalid request: " + document.error().message));
    }
    if (document->is_array())
        return answer(error_line(k_null_id, k_invalid_request, "Invalid request: batches (JSON arrays) are not supported."));
    if (!document->is_object())
        return answer(error_line(k_null_id, k_invalid_request, "Invalid request: a message is one JSON object."));
    const auto& message = document->as_object();
    const auto* id = message.if_contains("id");
    const auto* method = message.if_contains("method");
    const bool is_request = id != nullptr;
    // Anything wrong with a notification goes unanswered.
    const auto refuse = [&](std::string_view why) -> Reaction {
        if (!is_request) return {};
        return answer(error_line(valid_id(*id) ? *id : k_null_id, k_invalid_request, "Invalid request: " + std::string(why)));
    };
    if (!method && (message.contains("result") || message.contains("error"))) return {};  // a response: none expected
    std::string stray;
    if (!only_keys(message, {"jsonrpc", "id", "method", "params"}, stray))
        return refuse("unknown key \"" + stray + "\".");
    const auto* version = message.if_contains("jsonrpc");
    if (!version || !version->is_string() || version->as_string() != "2.0")
        return refuse("\"jsonrpc\" must be \"2.0\".");
    if (is_request && !valid_id(*id)) return refuse("\"id\" must be a string or an integer.");
    if (!method || !method->is_string()) return refuse("\"method\" must be a string.");
    const auto* params = message.if_contains("params");
    if (params && !params->is_object()) {
        if (!is_request) return {};
        return answer(error_line(*id, k_invalid_params, "Invalid params: \"params\" must be an object."));
    }
    static const json::object k_no_params;
    const auto& params_object = params ? params->as_object() : k_no_params;
    if (!is_request) {
        Reaction reaction;
        on_notification(method->as_string(), params_object, reaction);
        return reaction;
    }
    return on_request(*id, method->as_string(), params_object);
}

void Session::on_notification(std::string_view method, const json::object& params, Reaction& reaction)
{
    if (method == "notifications/initialized") return;  // initialize's answer already opened the session
    if (method != "notifications/cancelled") return;
    const auto* request_id = params.if_contains("requestId");
    if (!request_id || !valid_id(*request_id) || !is_running(*request_id)) return;
    std::erase(m_running, *request_id);
    reaction.cancel = *request_id;
}

Reaction Session::on_request(const json::value& id, std::string_view method, const json::object& params)
{
    if (method == "initialize") {
        if (m_initialized) return answer(error_line(id, k_invalid_request, "Invalid request: the session is already initialized."));
        return answer(initialize(id, params));
    }
    if (method == "ping") return answer(result_line(id, json::object{}));
    if (!m_initialized)
        return answer(error_line(id, k_invalid_request, "Invalid request: the session is not initialized; send initialize first."));
    if (method == "tools/list") {
        const auto* cursor = params.if_contains("cursor");
        if (cursor) return answer(error_line(id, k_invalid_params, "Invalid params: there is no next page (unknown cursor)."));
        return answer(result_line(id, json::object{{"tools", m_tools}}));
    }
    if (method != "tools/call") return answer(error_line(id, k_method_not_found, "Method not found: " + std::string(method)));

    const auto* name = params.if_contains("name");
    if (!name || !name->is_string()) return answer(error_line(id, k_invalid_params, "Invalid params: \"name\" must be a string."));
    const auto* arguments = params.if_contains("arguments");
    if (arguments && !arguments->is_object())
        return answer(error_line(id, k_invalid_params, "Invalid params: \"arguments\" must be an object."));
    const bool known = std::any_of(m_tools.begin(), m_tools.end(), [&](const json::value& tool) {
        return tool.as_object().at("name") == *name;
    });
    if (!known) return answer(error_line(id, k_invalid_params, "Unknown tool: " + std::string(name->as_string())));
    if (is_running(id)) return answer(error_line(id, k_invalid_request, "Invalid request: a call with this id is still running."));
    if (++m_calls > limits::k_mcp_max_calls)
        return answer(error_line(id, k_session_cap_reached, cap_message("tool calls", limits::k_mcp_max_calls)));
    m_running.push_back(id);
    Reaction reaction;
    reaction.call = ToolCall{id, std::string(name->as_string()), arguments ? arguments->as_object() : json::object{}, {}};
    if (const auto* meta = params.if_contains("_meta"); meta && meta->is_object())
        if (const auto* token = meta->as_object().if_contains("progressToken");
            token && (token->is_string() || token->is_int64() || token->is_uint64()))
            reaction.call->progress_token = *token;
    return reaction;
}

std::string Session::initialize(const json::value& id, const json::object& params)
{
    const auto* requested = params.if_contains("protocolVersion");
    if (!requested || !requested->is_string())
        return error_line(id, k_invalid_params, "Invalid params: \"protocolVersion\" must be a string.");
    const auto* capabilities = params.if_contains("capabilities");
    if (capabilities && !capabilities->is_object())
        return error_line(id, k_invalid_params, "Invalid params: \"capabilities\" must be an object.");
    const auto* client_info = params.if_contains("clientInfo");
    if (client_info && !client_info->is_object())
        return error_line(id, k_invalid_params, "Invalid params: \"clientInfo\" must be an object.");
    m_initialized = true;
    json::object result{
        {"protocolVersion", negotiate_version(requested->as_string())},
        {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}}},
        {"serverInfo", json::object{{"name", m_info.name}, {"version", m_info.version}}},
    };
    if (!m_info.instructions.empty()) result["instructions"] = m_info.instructions;
    return result_line(id, std::move(result));
}

bool Session::is_running(const json::value& id) const
{
    return std::find(m_running.begin(), m_running.end(), id) != m_running.end();
}

std::optional<std::string> Session::finish_call(const json::value& id, json::object result)
{
    if (!is_running(id)) return std::nullopt;
    std::erase(m_running, id);
    auto line = result_line(id, std::move(result));
    if (line.size() <= limits::k_mcp_max_response_bytes) return line;
    return result_line(id, tool_error("The result was larger than the " +
                                      std::to_string(limits::k_mcp_max_response_bytes) +
                                      "-byte cap of a response and was dropped."));
}

}  // namespace pybox::client::mcp
