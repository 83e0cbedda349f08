// Live output against the real daemon and engine (docs/api.md "Streamed runs"): the NDJSON form
// of POST /v1/runs read by a client of its own (Beast, event by event with arrival times), and
// `pybox exec` printing as the program prints. The receipt and the engine's own event stream
// are the observers the stream must agree with.
#include "tests/integration/harness.hpp"
#include "tests/support/build_paths.hpp"

#include "common/clock.hpp"
#include "util/text.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

using namespace pybox;
using namespace pybox::test;
using namespace std::chrono_literals;
namespace json = boost::json;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Local = net::local::stream_protocol;
using Clock = std::chrono::steady_clock;

namespace {

struct Event {
    json::object line;
    Clock::time_point arrived;
};

// One streamed run on the suite's daemon, read event by event.
class StreamedRun {
public:
    explicit StreamedRun(const json::object& request) : m_socket(m_io)
    {
        m_socket.connect(Local::endpoint((runtime_home() / "pyboxd.sock").string()));
        http::request<http::string_body> message{http::verb::post, "/v1/runs", 11};
        message.set(http::field::host, "pybox");
        message.set(http::field::accept, "application/x-ndjson");
        message.set(http::field::content_type, "application/json");
        message.body() = json::serialize(request);
        message.prepare_payload();
        http::write(m_socket, message);
        m_parser.body_limit(64 << 20);
        http::read_header(m_socket, m_buffer, m_parser);
    }

    unsigned status() const { return m_parser.get().result_int(); }
    std::string content_type() const { return std::string(m_parser.get()[http::field::content_type]); }

    // The next event, or nullopt at the end of the answer.
    std::optional<Event> next()
    {
        for (;;) {
            auto& body = m_parser.get().body();
            if (const auto end = body.find('\n'); end != std::string::npos) {
                Event event{json::parse(body.substr(0, end)).as_object(), Clock::now()};
                body.erase(0, end + 1);
                return event;
            }
            if (m_parser.is_done()) return std::nullopt;
            http::read_some(m_socket, m_buffer, m_parser);
        }
    }

    std::vector<Event> rest()
    {
        std::vector<Event> events;
        while (auto event = next()) events.push_back(std::move(*event));
        return events;
    }

    void close() { m_socket.close(); }

private:
    net::io_context m_io;
    Local::socket m_socket;
    beast::flat_buffer m_buffer;
    http::response_parser<http::string_body> m_parser;
};

json::object run_of(const std::string& source, double timeout_s = 10, std::int64_t output_limit = 65536)
{
    return json::object{{"source", source}, {"timeout_s", timeout_s}, {"output_limit_bytes", output_limit}};
}

std::string bytes_of(const json::object& event)
{
    const auto data = std::string(event.at("data").as_string());
    if (event.at("encoding") == "utf-8") return data;
    REQUIRE(event.at("encoding") == "base64");
    auto decoded = util::base64_decode(data);
    REQUIRE(decoded);
    return *decoded;
}

// The bytes a receipt kept of one stream ("stdout" or "stderr").
std::string kept_of(const json::value& receipt, const std::string& stream)
{
    const auto& capture = receipt.at("capture").as_object();
    const auto text = std::string(capture.at(stream).as_string());
    if (capture.at(stream + "_encoding") == "utf-8") return text;
    auto decoded = util::base64_decode(text);
    REQUIRE(decoded);
    return *decoded;
}

struct Streams {
    std::string out;
    std::string err;
    std::optional<json::value> answer;
    std::string run_id;
};

Streams gather(const std::vector<Event>& events)
{
    Streams streams;
    for (const auto& event : events) {
        const auto kind = std::string(event.line.at("event").as_string());
        if (kind == "started") streams.run_id = std::string(event.line.at("run_id").as_string());
        if (kind == "stdout") streams.out += bytes_of(event.line);
        if (kind == "stderr") streams.err += bytes_of(event.line);
        if (kind == "receipt") streams.answer = event.line.at("answer");
    }
    return streams;
}

}  // namespace

TEST_CASE("A streamed run's lines arrive as the program prints them, then the receipt")
{
    // One write a line (print() would write the "\n" apart, and the engine may frame them apart).
    StreamedRun run(run_of("import sys, time\nfor i in range(3):\n    sys.stdout.write(f'{i}\\n')\n"
                           "    sys.stdout.flush()\n    time.sleep(1)\n"));
    REQUIRE(run.status() == 200);
    CHECK(run.content_type() == "application/x-ndjson");
    const auto events = run.rest();
    REQUIRE(events.size() == 5);
    CHECK(events[0].line.at("event") == "started");
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(events[1 + i].line.at("event") == "stdout");
        CHECK(bytes_of(events[1 + i].line) == std::to_string(i) + "\n");
    }
    CHECK(events[4].line.at("event") == "receipt");
    // A second apart, as printed: not all at the end.
    CHECK(events[2].arrived - events[1].arrived > 700ms);
    CHECK(events[4].arrived - events[1].arrived > 1700ms);
    const auto streams = gather(events);
    REQUIRE(streams.answer);
    CHECK(streams.answer->at("identity").at("run_id").as_string() == streams.run_id);
    CHECK(streams.answer->at("observed").at("termination").at("exit_code") == 0);
    CHECK(streams.answer->as_object().contains("signature"));
}

TEST_CASE("Floods on both streams stream exactly the bytes the receipt keeps, and its counts say the rest")
{
    const std::string flood = "import sys\nfor i in range(20000):\n    sys.stdout.write('o' * 10 + '\\n')\n"
                              "    sys.stderr.write('e' * 10 + '\\n')\n";
    StreamedRun run(run_of(flood, 10, 30000));
    const auto streams = gather(run.rest());
    REQUIRE(streams.answer);
    const auto& receipt = *streams.answer;
    CHECK(streams.out == kept_of(receipt, "stdout"));
    CHECK(streams.err == kept_of(receipt, "stderr"));
    CHECK(streams.out.size() == 30000);
    CHECK(streams.err.size() == 30000);
    const auto& capture = receipt.at("capture");
    CHECK(capture.at("stdout_bytes_kept") == 30000);
    CHECK(capture.at("stdout_bytes_dropped") == 220000 - 30000);
    CHECK(capture.at("stderr_bytes_dropped") == 220000 - 30000);
}

TEST_CASE("Bytes that are not UTF-8, and a character split across writes, stream exactly as the receipt keeps them")
{
    const std::string program = "import sys, time\nsys.stdout.buffer.write(b'\\xff\\xfeA\\xc3'); sys.stdout.flush()\n"
                                "time.sleep(0.3)\nsys.stdout.buffer.write(b'\\xa9!'); sys.stdout.flush()\n"
                                "sys.stderr.buffer.write(b'\\x00\\x01'); sys.stderr.flush()\n";
    StreamedRun run(run_of(program));
    const auto events = run.rest();
    const auto streams = gather(events);
    REQUIRE(streams.answer);
    CHECK(streams.out == std::string("\xff\xfe" "A\xc3\xa9!"));
    CHECK(streams.out == kept_of(*streams.answer, "stdout"));
    CHECK(streams.err == std::string("\x00\x01", 2));
    CHECK(streams.err == kept_of(*streams.answer, "stderr"));
    // The "é" cut by the program's two writes went out whole, as text.
    bool whole = false;
    for (const auto& event : events)
        if (event.line.at("event") == "stdout" && event.line.at("encoding") == "utf-8")
            whole = whole || bytes_of(event.line) == "\xc3\xa9!";
    CHECK(whole);
}

TEST_CASE("A client that stops reading does not hold the run past its deadline")
{
    const auto since = unix_seconds(WallClock::now());
    StreamedRun run(run_of("import sys, time\nprint('x' * 60000, flush=True)\ntime.sleep(30)\n", 2));
    std::this_thread::sleep_for(6s);  // reads nothing while the deadline passes
    const auto streams = gather(run.rest());
    REQUIRE(streams.answer);
    const auto how = streams.answer->at("observed").at("termination").at("mechanism");
    CHECK((how == "DEADLINE_KILL" || how == "CAUSE_NOT_ESTABLISHED"));
    CHECK(streams.answer->at("lifecycle").at("timing").at("total_s").as_double() < 5.0);
    CHECK(streams.out.size() == 60001);
    CHECK_FALSE(box_exists(std::string(streams.answer->at("container_id").as_string())));
    const auto events = engine_events(std::string(streams.answer->at("container_id").as_string()), since - 1,
                                      unix_seconds(WallClock::now()) + 1);
    bool destroyed = false;
    for (const auto& event : events) destroyed = destroyed || event.at("Action") == "destroy";
    CHECK(destroyed);
}

TEST_CASE("A client that goes away mid-stream ends the run: the box is removed and the kept receipt says cancelled")
{
    StreamedRun run(run_of("import time\nprint('begun', flush=True)\ntime.sleep(25)\n", 30));
    const auto started = run.next();
    REQUIRE(started);
    REQUIRE(started->line.at("event") == "started");
    const auto run_id = std::string(started->line.at("run_id").as_string());
    // print() may write "begun" and "\n" apart: read until the whole line came.
    std::string shown;
    while (shown.size() < 6) {
        const auto event = run.next();
        REQUIRE(event);
        REQUIRE(event->line.at("event") == "stdout");
        shown += bytes_of(event->line);
    }
    CHECK(shown == "begun\n");
    run.close();
    std::optional<json::value> receipt;
    CHECK(within(15s, [&] {
        auto listed = try_run_pybox({"receipts", "show", run_id, "--json"});
        if (!listed || listed->exit_code != 0) return false;
        receipt = json::parse(listed->output);
        return true;
    }));
    REQUIRE(receipt);
    CHECK(receipt->at("lifecycle").at("cancelled") == true);
    CHECK(receipt->at("cleanup").at("status") == "REMOVED");
    CHECK_FALSE(box_exists(std::string(receipt->at("container_id").as_string())));
    CHECK(labelled_boxes().empty());
}

TEST_CASE("pybox exec shows each line as the program prints it, and exactly the bytes the receipt kept")
{
    Clock::time_point first_seen{};
    std::string shown;
    ProcessOptions options;
    options.input = "import time\nprint('first', flush=True)\ntime.sleep(2)\nprint('second')\n";
    options.separate_stderr = true;
    options.timeout = 60s;
    options.env = {{"PYBOX_HOME", runtime_home().string()}};
    options.on_output = [&](std::string_view chunk) {
        if (first_seen == Clock::time_point{} && chunk.find("first") != std::string_view::npos) first_seen = Clock::now();
    };
    const auto begun = Clock::now();
    auto result = run_process({client_path(), "exec", "-", "--timeout", "5"}, options);
    const auto ended = Clock::now();
    REQUIRE(result.has_value());
    CHECK(result->exit_code == 0);
    CHECK(result->output == "first\nsecond\n");
    REQUIRE(first_seen != Clock::time_point{});
    CHECK(ended - first_seen > 1500ms);  // "first" was on screen while the program slept
    CHECK(first_seen - begun < ended - begun);
}
