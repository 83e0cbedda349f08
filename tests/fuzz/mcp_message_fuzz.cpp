// Fuzz target: `pybox mcp` reads untrusted lines from its client (client/mcp/mcp_protocol.hpp).
// The bytes go through the line splitter in two pieces and every line into an initialized
// session. Invariants: it never crashes; every line longer than the cap is reported oversized
// and carries no text; every reply is one line of JSON-RPC 2.0 with an "id" and either a
// "result" or an "error", within the response cap; a started call can be finished once.
#include "client/mcp/mcp_protocol.hpp"

#include "common/limits.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

void check_reply(const std::string& reply)
{
    if (reply.find('\n') != std::string::npos || reply.size() > pybox::limits::k_mcp_max_response_bytes) std::abort();
    boost::system::error_code ec;
    const auto document = boost::json::parse(reply, ec);
    if (ec || !document.is_object()) std::abort();
    const auto& object = document.as_object();
    if (object.at("jsonrpc") != "2.0" || !object.contains("id")) std::abort();
    if (object.contains("result") == object.contains("error")) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace pybox::client::mcp;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    Session session({"pybox", "0", ""}, boost::json::array{boost::json::object{{"name", "run_python"}}});
    session.on_line({R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"x"}})", false});
    // A small cap, so that oversized lines are reached too.
    constexpr std::size_t k_cap = 4096;
    LineSplitter splitter(k_cap);
    const auto half = bytes.size() / 2;
    for (const auto piece : {bytes.substr(0, half), bytes.substr(half)}) {
        for (const auto& line : splitter.feed(piece)) {
            if (line.text.size() > k_cap || (line.oversized && !line.text.empty())) std::abort();
            const auto reaction = session.on_line(line);
            if (reaction.reply) check_reply(*reaction.reply);
            if (reaction.call) {
                const auto answer = session.finish_call(reaction.call->id, tool_error("done"));
                if (!answer) std::abort();
                check_reply(*answer);
                if (session.finish_call(reaction.call->id, tool_error("again"))) std::abort();
            }
        }
    }
    return 0;
}
