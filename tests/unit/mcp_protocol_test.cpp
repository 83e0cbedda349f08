#include "client/mcp/mcp_protocol.hpp"

#include "common/limits.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace json = boost::json;
using namespace pybox::client::mcp;
using pybox::limits::k_mcp_max_message_bytes;

namespace {

Session make_session()
{
    return Session({"pybox", "1.0", ""}, json::array{json::object{{"name", "run_python"}}});
}

Reaction send(Session& session, std::string_view text)
{
    return session.on_line({std::string(text), false});
}

json::object reply_of(const Reaction& reaction)
{
    REQUIRE(reaction.reply.has_value());
    return json::parse(*reaction.reply).as_object();
}

std::int64_t error_code_of(const Reaction& reaction)
{
    return reply_of(reaction).at("error").at("code").as_int64();
}

const std::string k_initialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

Session initialized_session()
{
    auto session = make_session();
    send(session, k_initialize);
    send(session, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    return session;
}

std::string call_line(int id, std::string_view tool = "run_python")
{
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" +
           std::string(tool) + R"x(","arguments":{"program":"print(1)"}}})x";
}

}  // namespace

TEST_CASE("MCP versions: a supported revision is echoed, anything else gets the latest")
{
    CHECK(negotiate_version("2025-11-25") == "2025-11-25");
    CHECK(negotiate_version("2025-06-18") == "2025-06-18");
    CHECK(negotiate_version("2025-03-26") == "2025-03-26");
    CHECK(negotiate_version("2024-11-05") == "2024-11-05");
    CHECK(negotiate_version("2024-10-07") == "2025-11-25");
    CHECK(negotiate_version("2099-01-01") == "2025-11-25");
    auto session = make_session();
    const auto answer = reply_of(send(session,
        R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"));
    CHECK(answer.at("id") == "a");
    CHECK(answer.at("result").at("protocolVersion") == "2024-11-05");
    CHECK(answer.at("result").at("capabilities").at("tools").is_object());
    CHECK(answer.at("result").at("serverInfo").at("name") == "pybox");
    CHECK(error_code_of(send(session, k_initialize)) == k_invalid_request);  // once only
}

TEST_CASE("MCP lines: split on newlines, a trailing CR dropped, an oversized line refused once and skipped")
{
    LineSplitter splitter(8);
    auto lines = splitter.feed("ab");
    CHECK(lines.empty());
    lines = splitter.feed("c\r\n12345678\n123456789\nxy");
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].text == "abc");
    CHECK(lines[1].text == "12345678");
    CHECK(!lines[1].oversized);
    CHECK(lines[2].oversized);
    lines = splitter.feed(std::string(100, 'z'));
    CHECK(lines.empty());
    lines = splitter.feed(std::string(100, 'z') + "\nok\n");
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].oversized);
    CHECK(lines[0].text.empty());
    CHECK(lines[1].text == "ok");
    CHECK(!lines[1].oversized);
}

TEST_CASE("MCP: a line of the cap is read, one byte more is refused with id null and the session goes on")
{
    LineSplitter splitter(k_mcp_max_message_bytes);
    auto lines = splitter.feed(std::string(k_mcp_max_message_bytes, ' ') + "\n" +
                               std::string(k_mcp_max_message_bytes + 1, ' ') + "\n");
    REQUIRE(lines.size() == 2);
    CHECK(!lines[0].oversized);
    CHECK(lines[1].oversized);
    auto session = initialized_session();
    const auto refused = reply_of(session.on_line(lines[1]));
    CHECK(refused.at("id").is_null());
    CHECK(refused.at("error").at("code") == k_invalid_request);
    CHECK(reply_of(send(session, R"({"jsonrpc":"2.0","id":5,"method":"ping"})")).at("result").as_object().empty());
}

TEST_CASE("MCP: malformed JSON is -32700 with id null; arrays and other shapes are -32600")
{
    auto session = initialized_session();
    auto parse_error = reply_of(send(session, R"({"jsonrpc":"2.0","id":1,"method":)"));
    CHECK(parse_error.at("id").is_null());
    CHECK(parse_error.at("error").at("code") == k_parse_error);
    auto batch = reply_of(send(session, R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])"));
    CHECK(batch.at("id").is_null());
    CHECK(batch.at("error").at("code") == k_invalid_request);
    CHECK(error_code_of(send(session, "42")) == k_invalid_request);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"1.0","id":1,"method":"ping"})")) == k_invalid_request);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":null,"method":"ping"})")) == k_invalid_request);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})")) == k_invalid_request);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":1,"method":"ping","x":1})")) == k_invalid_request);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":1,"id":2,"method":"ping"})")) == k_invalid_request);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[]})")) == k_invalid_params);
    CHECK(!send(session, "   ").reply);  // blank lines are not messages
}

TEST_CASE("MCP: notifications and responses are never answered")
{
    auto session = make_session();
    CHECK(!send(session, R"({"jsonrpc":"2.0","method":"notifications/initialized"})").reply);
    CHECK(!send(session, R"({"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}})").reply);
    CHECK(!send(session, R"({"jsonrpc":"2.0","method":"tools/call"})").reply);
    CHECK(!send(session, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":[]})").reply);
    CHECK(!send(session, R"({"jsonrpc":"1.0","method":"x","extra":2})").reply);
    CHECK(!send(session, R"({"jsonrpc":"2.0","id":7,"result":{}})").reply);
    CHECK(!send(session, R"({"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}})").reply);
}

TEST_CASE("MCP: before initialize only initialize and ping are served")
{
    auto session = make_session();
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})")) == k_invalid_request);
    CHECK(error_code_of(send(session, call_line(2))) == k_invalid_request);
    CHECK(reply_of(send(session, R"({"jsonrpc":"2.0","id":3,"method":"ping"})")).contains("result"));
    CHECK(!session.initialized());
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":{}})")) ==
          k_invalid_params);
    CHECK(!session.initialized());
    send(session, k_initialize);
    CHECK(session.initialized());
}

TEST_CASE("MCP methods: tools/list, unknown methods and tools")
{
    auto session = initialized_session();
    const auto list = reply_of(send(session, R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}})"));
    CHECK(list.at("result").at("tools").as_array().size() == 1);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":2,"method":"server/discover"})")) == k_method_not_found);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})")) == k_method_not_found);
    CHECK(error_code_of(send(session, call_line(4, "rm_rf"))) == k_invalid_params);
    CHECK(error_code_of(send(session, R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_python","arguments":[]}})")) ==
          k_invalid_params);
}

TEST_CASE("MCP calls: started, answered once, and never answered once cancelled")
{
    auto session = initialized_session();
    const auto started = send(session, call_line(1));
    REQUIRE(started.call.has_value());
    CHECK(started.call->name == "run_python");
    CHECK(started.call->arguments.at("program") == "print(1)");
    CHECK(error_code_of(send(session, call_line(1))) == k_invalid_request);  // id still running
    REQUIRE(send(session, call_line(2)).call.has_value());
    CHECK(session.running_calls() == 2);

    const auto cancel = send(session, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"x"}})");
    CHECK(!cancel.reply);
    REQUIRE(cancel.cancel.has_value());
    CHECK(*cancel.cancel == 2);
    CHECK(!session.finish_call(2, tool_error("late")));
    CHECK(!send(session, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}})").cancel);

    const auto answer = session.finish_call(1, tool_error("done"));
    REQUIRE(answer.has_value());
    const auto parsed = json::parse(*answer).as_object();
    CHECK(parsed.at("id") == 1);
    CHECK(parsed.at("result").at("isError") == true);
    CHECK(!session.finish_call(1, tool_error("twice")));
    CHECK(session.running_calls() == 0);
}

TEST_CASE("MCP: a result over the response cap becomes a tool error that says so")
{
    auto session = initialized_session();
    REQUIRE(send(session, call_line(1)).call.has_value());
    json::object huge{{"content", json::array{json::object{{"type", "text"},
                                                           {"text", std::string(pybox::limits::k_mcp_max_response_bytes, 'x')}}}}};
    const auto answer = session.finish_call(1, std::move(huge));
    REQUIRE(answer.has_value());
    CHECK(answer->size() < 1024);
    CHECK(answer->find("262144") != std::string::npos);
    CHECK(json::parse(*answer).at("result").at("isError") == true);
}

TEST_CASE("MCP session caps: the 33rd call and the 257th message are refused saying so")
{
    auto session = initialized_session();
    std::size_t messages = 2;
    for (int id = 1; id <= static_cast<int>(pybox::limits::k_mcp_max_calls); ++id, ++messages) {
        const auto started = send(session, call_line(id));
        REQUIRE(started.call.has_value());
        if (id < static_cast<int>(pybox::limits::k_mcp_max_calls)) REQUIRE(session.finish_call(id, tool_error("ok")));
    }
    const auto refused = reply_of(send(session, call_line(100)));
    ++messages;
    CHECK(refused.at("error").at("code") == k_session_cap_reached);
    CHECK(std::string(refused.at("error").at("message").as_string()).find("32 tool calls") != std::string::npos);
    for (; messages < pybox::limits::k_mcp_max_messages; ++messages)
        REQUIRE(reply_of(send(session, R"({"jsonrpc":"2.0","id":"p","method":"ping"})")).contains("result"));
    const auto over = reply_of(send(session, R"({"jsonrpc":"2.0","id":"last","method":"ping"})"));
    CHECK(over.at("id") == "last");
    CHECK(over.at("error").at("code") == k_session_cap_reached);
    CHECK(std::string(over.at("error").at("message").as_string()).find("256 messages") != std::string::npos);
    CHECK(!send(session, R"({"jsonrpc":"2.0","method":"notifications/initialized"})").reply);
    // The last call still runs: cancelling it is honoured past the cap.
    const auto cancel = send(session, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":32}})");
    REQUIRE(cancel.cancel.has_value());
    CHECK(*cancel.cancel == 32);
}

TEST_CASE("MCP: a call's progress token is taken from params._meta when it is a string or an integer")
{
    auto session = initialized_session();
    const auto with_meta = [](int id, std::string_view meta) {
        return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
               R"x(,"method":"tools/call","params":{"name":"run_python","arguments":{"program":"print(1)"},"_meta":)x" +
               std::string(meta) + "}}";
    };
    auto by_string = send(session, with_meta(1, R"({"progressToken":"t-1"})"));
    REQUIRE(by_string.call);
    CHECK(by_string.call->progress_token == json::value("t-1"));
    auto by_number = send(session, with_meta(2, R"({"progressToken":7})"));
    REQUIRE(by_number.call);
    CHECK(by_number.call->progress_token == json::value(7));
    auto by_object = send(session, with_meta(3, R"({"progressToken":{"a":1}})"));
    REQUIRE(by_object.call);
    CHECK_FALSE(by_object.call->progress_token);
    auto without = send(session, call_line(4));
    REQUIRE(without.call);
    CHECK_FALSE(without.call->progress_token);
}
