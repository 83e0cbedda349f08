// HttpServer over a real unix socket in a temporary folder, with fake services; the client
// side is raw bytes so malformed HTTP can be sent. No engine needed.
#include "daemon/server/api_router.hpp"
#include "daemon/server/http_server.hpp"
#include "proto/api.hpp"

#include "common/ids.hpp"
#include "common/sha256.hpp"
#include "proto/receipt.hpp"
#include "proto/receipt_signature.hpp"
#include "tests/support/source_text.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Local = net::local::stream_protocol;
using pybox::daemon::HttpServer;
using pybox::test::lines_of;
using pybox::daemon::HttpServerOptions;

constexpr auto k_tuple = net::as_tuple(net::use_awaitable);

// A run whose source is "wait" lasts until cancelled (or 10 s); "busy" is refused as the full
// run queue refuses; "throw" throws an int, as a bug might throw anything; any other source ends after 300 ms with a receipt carrying the source's
// SHA-256. An observer is told the start (run "1...1"), "out\n" on stdout and a byte 0xFF and
// the first two bytes of "é" on stderr, then the rest of the "é".
// The key the fakes issue receipts with.
const pybox::SigningKey& http_fakes_key()
{
    static const pybox::SigningKey key = pybox::SigningKey::generate().value();
    return key;
}

class FakeRunService : public pybox::daemon::RunService {
public:
    static constexpr const char* k_not_kept = "pyboxd signed the receipt of run 1 but could not keep it: full.";

    net::awaitable<pybox::Expected<pybox::proto::IssuedRunAnswer>> run(pybox::proto::ValidRunRequest valid,
                                                                       std::uint32_t owner_uid,
                                                                       net::cancellation_slot cancelled,
                                                                       pybox::daemon::RunObserver* observer) override
    {
        const pybox::proto::RunRequest& request = valid.request();
        last_owner = owner_uid;
        if (request.source == "busy") co_return pybox::make_error("busy", "pyboxd is busy; nothing ran.");
        if (request.source == "throw") throw 28;
        if (observer != nullptr) {
            observer->started(std::string(32, '1'));
            observer->output(pybox::proto::OutputStream::stdout_stream, "out\n");
            observer->output(pybox::proto::OutputStream::stderr_stream, "\xff\xc3");
        }
        net::steady_timer timer(co_await net::this_coro::executor, request.source == "wait" ? 10s : 300ms);
        auto [ec] = co_await timer.async_wait(net::bind_cancellation_slot(cancelled, k_tuple));
        pybox::proto::Receipt receipt;
        receipt.source_sha256 = pybox::sha256_hex(request.source);
        receipt.lifecycle.cancelled = ec == net::error::operation_aborted;
        if (observer != nullptr) observer->output(pybox::proto::OutputStream::stderr_stream, "\xa9");
        if (receipt.lifecycle.cancelled) m_cancellations.fetch_add(1);
        pybox::proto::IssuedRunAnswer answer{pybox::proto::issue_receipt(std::move(receipt), http_fakes_key()), {},
                                             std::nullopt};
        if (request.source == "unkept") answer.receipt_not_kept = k_not_kept;
        co_return answer;
    }
    int cancellations() const { return m_cancellations.load(); }
    std::atomic<std::uint32_t> last_owner{UINT32_MAX};

private:
    std::atomic<int> m_cancellations{0};
};

class FakeEngineControl : public pybox::daemon::EngineControl {
public:
    net::awaitable<pybox::Expected<pybox::proto::EngineStartAnswer>> start() override
    {
        pybox::proto::EngineStartAnswer answer;
        answer.running = true;
        answer.verified = true;
        co_return answer;
    }
    net::awaitable<pybox::Expected<pybox::proto::EngineStopAnswer>> stop() override
    {
        co_return pybox::make_error("engine_unreachable", "The engine does not answer.");
    }
    net::awaitable<pybox::proto::EngineStatus> status() override
    {
        pybox::proto::EngineStatus status;
        status.engine_socket = "/x";
        co_return status;
    }
};

class FakeImageService : public pybox::daemon::ImageService {
public:
    net::awaitable<pybox::Expected<pybox::proto::SetupAnswer>> setup(std::vector<std::string> images, bool) override
    {
        pybox::proto::SetupAnswer answer;
        for (auto& name : images) {
            pybox::proto::SetupImage image;
            image.name = std::move(name);
            answer.images.push_back(std::move(image));
        }
        co_return answer;
    }
    net::awaitable<pybox::Expected<pybox::proto::ImageList>> list() override
    {
        co_return pybox::make_error("image_not_built", "Run pybox setup first.");
    }
    net::awaitable<pybox::Expected<pybox::proto::SetupAnswer>> build_own(std::string name, std::string) override
    {
        std::vector<std::string> images(1, std::move(name));
        co_return co_await setup(std::move(images), false);
    }
    net::awaitable<pybox::Expected<pybox::proto::ImageList>> remove_own(std::string name) override
    {
        co_return pybox::make_error("image_not_built", "There is no own image named " + name + ".");
    }
    pybox::proto::SetupProgress progress() override
    {
        return pybox::proto::SetupProgress{"data", "downloading packages with apt...", 7, 12345, 2.5};
    }
};

class FakeAttemptRecords : public pybox::daemon::AttemptRecords {
public:
    std::optional<std::uint32_t> last_viewer;
    pybox::Expected<pybox::proto::AttemptsAnswer> list(std::optional<std::uint32_t> viewer) override
    {
        last_viewer = viewer;
        pybox::proto::AttemptsAnswer answer;
        answer.damaged_lines = 2;
        return answer;
    }
};

class FakeDoctor : public pybox::daemon::Doctor {
public:
    net::awaitable<pybox::proto::DoctorAnswer> check(std::optional<std::uint32_t>) override
    {
        co_return pybox::proto::DoctorAnswer{{{"engine", "problem", "not running", "pybox vm start"}}};
    }
};

class FakeRepairService : public pybox::daemon::RepairService {
public:
    std::optional<std::uint32_t> last_owner;
    net::awaitable<pybox::Expected<pybox::proto::RepairRecord>> repair(pybox::proto::RepairRequest request, std::uint32_t owner_uid,
                                                                     net::cancellation_slot) override
    {
        last_owner = owner_uid;
        pybox::proto::RepairRecord record;
        record.rounds_allowed = request.rounds;
        record.original_sha256 = pybox::sha256_hex(request.run.request().source);
        co_return record;
    }
};

// Keeps nothing (the router issues no receipt: the run service does), lists one receipt, finds none.
class FakeReceiptKeeper : public pybox::daemon::ReceiptKeeper {
public:
    std::optional<std::uint32_t> last_viewer;
    pybox::daemon::Issuance issue(pybox::proto::Receipt receipt, std::uint32_t) override
    {
        return {pybox::proto::issue_receipt(std::move(receipt), http_fakes_key()),
                pybox::make_error("internal_error", "the router does not issue receipts")};
    }
    pybox::Expected<pybox::proto::ReceiptList> list(std::optional<std::uint32_t> viewer) override
    {
        last_viewer = viewer;
        pybox::proto::ReceiptList answer{{}, 1000, 64};
        answer.receipts.push_back({std::string(32, 'a'), "2026-12-01T00:00:00.000000Z", "stdlib", 0,
                                   "TARGET_EXIT_OBSERVED", true, 1234, 1001, std::nullopt});
        return answer;
    }
    pybox::Expected<boost::json::value> get(const std::string& run_id, std::optional<std::uint32_t> viewer) override
    {
        last_viewer = viewer;
        return pybox::make_error("no_such_receipt", "none of " + run_id);
    }
    bool holds(const std::string&) const override { return false; }
};

// The services a server or router borrows, as fakes.
struct FakeServices {
    FakeRunService runs;
    FakeEngineControl engine;
    FakeImageService images;
    FakeAttemptRecords attempts;
    FakeDoctor doctor;
    FakeRepairService repair;
    FakeReceiptKeeper receipts;

    pybox::daemon::DaemonServices all() { return {runs, engine, images, attempts, doctor, repair, receipts}; }
};

class TempDir {
public:
    TempDir() : m_path(fs::temp_directory_path() / ("pbx-" + pybox::random_id_128().substr(0, 12)))
    {
        fs::create_directories(m_path);
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// The server with fake services, running on its own thread for the lifetime of the object.
class RunningServer {
public:
    explicit RunningServer(HttpServerOptions options = {})
        : m_server(m_io.get_executor(), socket_path(), services.all(), options)
    {
        auto started = m_server.start();
        REQUIRE(started.has_value());
        m_thread = std::thread([this] { m_io.run(); });
    }
    ~RunningServer()
    {
        m_server.stop();
        m_thread.join();  // returns only once every connection coroutine has ended
    }
    fs::path socket_path() const { return m_dir.path() / "pyboxd.sock"; }

    FakeServices services;

private:
    TempDir m_dir;
    net::io_context m_io;
    HttpServer m_server;
    std::thread m_thread;
};

struct Reply {
    unsigned status = 0;
    std::string body;
    std::string content_type;
    bool has_content_length = false;
    std::string retry_after;
    std::string receipt_not_kept;
};

// A raw client: sends bytes as given, reads with a deadline so a broken server fails the test
// instead of hanging it.
class RawClient {
public:
    explicit RawClient(const fs::path& socket) : m_socket(m_io) { m_socket.connect(Local::endpoint(socket.string())); }

    void send(std::string_view bytes)
    {
        boost::system::error_code ec;  // the server may close before it has read everything
        net::write(m_socket, net::buffer(bytes), ec);
    }

    std::optional<Reply> read_reply(std::chrono::milliseconds timeout = 2s)
    {
        http::response<http::string_body> response;
        http::response_parser<http::string_body> parser;
        parser.body_limit(1 << 20);
        std::optional<beast::error_code> result;
        http::async_read(m_socket, m_buffer, parser, [&](beast::error_code ec, std::size_t) { result = ec; });
        if (!finish(timeout, [&] { return result.has_value(); }) || *result) return std::nullopt;
        const auto& message = parser.get();
        return Reply{message.result_int(), message.body(), std::string(message[http::field::content_type]),
                     message.has_content_length(), std::string(message[http::field::retry_after]),
                     std::string(message[pybox::proto::k_receipt_not_kept_header])};
    }

    // True when the server closes the connection within the timeout (data before it is dropped).
    bool closed_by_server(std::chrono::milliseconds timeout = 2s)
    {
        bool closed = false;
        std::array<char, 4096> chunk{};
        std::function<void(boost::system::error_code, std::size_t)> on_read = [&](boost::system::error_code ec,
                                                                                   std::size_t) {
            if (ec) {
                closed = true;
                return;
            }
            m_socket.async_read_some(net::buffer(chunk), on_read);
        };
        m_socket.async_read_some(net::buffer(chunk), on_read);
        return finish(timeout, [&] { return closed; });
    }

    void close() { m_socket.close(); }

private:
    template <class Done>
    bool finish(std::chrono::milliseconds timeout, Done done)
    {
        m_io.restart();
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!done() && std::chrono::steady_clock::now() < deadline) m_io.run_one_for(10ms);
        if (done()) return true;
        m_socket.cancel();
        m_io.restart();
        m_io.run();
        return false;
    }

    net::io_context m_io;
    Local::socket m_socket;
    beast::flat_buffer m_buffer;
};

std::string get(std::string_view target, std::string_view connection = "close")
{
    return "GET " + std::string(target) + " HTTP/1.1\r\nHost: pybox\r\nConnection: " + std::string(connection) +
           "\r\n\r\n";
}

std::string post(std::string_view target, std::string_view body)
{
    return "POST " + std::string(target) + " HTTP/1.1\r\nHost: pybox\r\nContent-Type: application/json\r\n" +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// POST /v1/runs asking for the run's events.
std::string streamed_run(std::string_view body)
{
    return "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nAccept: application/x-ndjson\r\nContent-Type: application/json\r\n"
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

std::string run_body(std::string_view source) { return R"({"source": ")" + std::string(source) + R"("})"; }

bool body_has_error(const Reply& reply, std::string_view code)
{
    return reply.body.find("\"code\":\"" + std::string(code) + "\"") != std::string::npos;
}

}  // namespace

TEST_CASE("The server answers a ping with JSON and a Content-Length")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send(get("/v1/ping"));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->content_type == "application/json");
    CHECK(reply->has_content_length);
    CHECK(reply->body.find(R"("daemon":"pyboxd")") != std::string::npos);
    CHECK(reply->body.find(R"("api":"v1")") != std::string::npos);
}

TEST_CASE("GET /v1/attempts answers the attempt records")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send(get("/v1/attempts"));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->body == R"({"unsettled":[],"unsettled_total":0,"settled":[],"damaged_lines":2})" "\n");
}

TEST_CASE("GET /v1/doctor answers the doctor's checks")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send(get("/v1/doctor"));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->body ==
          R"({"checks":[{"name":"engine","verdict":"problem","detail":"not running","fix":"pybox vm start"}]})" "\n");
}

TEST_CASE("GET /v1/setup/progress answers what the image service is building")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send(get("/v1/setup/progress"));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->body ==
          R"({"building":"data","phase":"downloading packages with apt...","downloaded_packages":7,"downloaded_bytes":12345,"seconds":2.5})"
          "\n");
}

TEST_CASE("The socket is private to its owner")
{
    RunningServer server;
    CHECK(fs::status(server.socket_path()).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("An unknown path gets 404 and a wrong method gets 405, both with JSON errors")
{
    RunningServer server;
    RawClient first(server.socket_path());
    first.send(get("/v2/nothing"));
    const auto missing = first.read_reply();
    REQUIRE(missing);
    CHECK(missing->status == 404);
    CHECK(body_has_error(*missing, "no_such_endpoint"));

    RawClient second(server.socket_path());
    second.send(get("/v1/runs"));
    const auto wrong_method = second.read_reply();
    REQUIRE(wrong_method);
    CHECK(wrong_method->status == 405);
    CHECK(body_has_error(*wrong_method, "method_not_allowed"));
}

TEST_CASE("Service errors are mapped to statuses")
{
    RunningServer server;
    RawClient first(server.socket_path());
    first.send(post("/v1/vm/stop", ""));
    const auto engine = first.read_reply();
    REQUIRE(engine);
    CHECK(engine->status == 503);

    RawClient second(server.socket_path());
    second.send(get("/v1/images"));
    const auto images = second.read_reply();
    REQUIRE(images);
    CHECK(images->status == 409);
    CHECK(body_has_error(*images, "image_not_built"));
}

TEST_CASE("A keep-alive connection serves several requests in order")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send(get("/v1/ping", "keep-alive") + get("/v1/vm/status", "keep-alive"));
    const auto ping = client.read_reply();
    const auto status = client.read_reply();
    REQUIRE(ping);
    REQUIRE(status);
    CHECK(ping->body.find("pyboxd") != std::string::npos);
    CHECK(status->body.find("engine_socket") != std::string::npos);
    client.send(post("/v1/setup", R"({"images": ["stdlib"], "refresh_lock": true})"));
    const auto setup = client.read_reply();
    REQUIRE(setup);
    CHECK(setup->status == 200);
    CHECK(setup->body.find("stdlib") != std::string::npos);
}

TEST_CASE("A malformed JSON body gets 400 and the next request on a new connection succeeds")
{
    RunningServer server;
    RawClient bad(server.socket_path());
    bad.send(post("/v1/runs", R"x({"source": "print(1)")x"));
    const auto refused = bad.read_reply();
    REQUIRE(refused);
    CHECK(refused->status == 400);
    CHECK(body_has_error(*refused, "invalid_json"));

    RawClient good(server.socket_path());
    good.send(get("/v1/ping"));
    const auto reply = good.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
}

TEST_CASE("A body announced as 10 GB is refused with 413 before it is read")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send("POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: 10737418240\r\n\r\n");
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 413);
    CHECK(body_has_error(*reply, "body_too_large"));
    CHECK(client.closed_by_server());
}

TEST_CASE("A 1 MB header is refused and the connection closed")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send("GET /v1/ping HTTP/1.1\r\nHost: pybox\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n");
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK((reply->status == 431 || reply->status == 400));
    CHECK(client.closed_by_server());
}

TEST_CASE("Conflicting Content-Length headers are refused with 400")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send("POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n12345");
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 400);
    CHECK(client.closed_by_server());
}

TEST_CASE("A chunked request is answered as its body asks, its trailer ignored")
{
    RunningServer server;
    RawClient client(server.socket_path());
    const std::string body = run_body("print(1)");
    std::ostringstream size;
    size << std::hex << body.size();
    client.send("POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: chunked\r\n\r\n" + size.str() + "\r\n" + body +
                "\r\n0\r\nConnection: close\r\n\r\n" + get("/v1/ping"));
    const auto run = client.read_reply();
    REQUIRE(run);
    CHECK(run->status == 200);
    CHECK(run->body.find(pybox::sha256_hex("print(1)")) != std::string::npos);
    const auto ping = client.read_reply();  // the trailer's Connection: close was not taken as the header's
    REQUIRE(ping);
    CHECK(ping->status == 200);
}

// Issue 28 item 7: Beast threw std::length_error out of the server's handler, and that ended the process.
TEST_CASE("A trailer field over 65,535 bytes gets 431 and the server serves the next client")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send("POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: " +
                std::string(65'540, 't') + "\r\n\r\n");
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 431);
    CHECK(body_has_error(*reply, "header_too_large"));
    CHECK(client.closed_by_server());
    RawClient next(server.socket_path());
    next.send(get("/v1/ping"));
    const auto ping = next.read_reply();
    REQUIRE(ping);
    CHECK(ping->status == 200);
}

TEST_CASE("A request whose handling throws an exception of any type gets 500 and the server serves on")
{
    RunningServer server;
    RawClient waiting(server.socket_path());
    waiting.send(post("/v1/runs", run_body("x")));
    RawClient thrower(server.socket_path());
    thrower.send(post("/v1/runs", run_body("throw")));
    const auto failed = thrower.read_reply();
    REQUIRE(failed);
    CHECK(failed->status == 500);
    CHECK(body_has_error(*failed, "internal_error"));
    const auto run = waiting.read_reply();
    REQUIRE(run);
    CHECK(run->status == 200);
    RawClient next(server.socket_path());
    next.send(get("/v1/ping"));
    const auto ping = next.read_reply();
    REQUIRE(ping);
    CHECK(ping->status == 200);
}

TEST_CASE("A body sent after Expect: 100-continue is read once the server says continue")
{
    RunningServer server;
    RawClient client(server.socket_path());
    const std::string body = R"({"images": ["stdlib"]})";
    client.send("POST /v1/setup HTTP/1.1\r\nHost: pybox\r\nExpect: 100-continue\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n");
    const auto go_on = client.read_reply();  // Beast's parser returns the 100 as a complete message
    REQUIRE(go_on);
    CHECK(go_on->status == 100);
    client.send(body);
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
}

TEST_CASE("A client that trickles its request is closed at the read deadline")
{
    HttpServerOptions options;
    options.request_read_timeout = 200ms;
    RunningServer server(options);
    RawClient client(server.socket_path());
    const auto begun = std::chrono::steady_clock::now();
    client.send("GET /v1/ping HTTP/1.1\r\n");
    for (int i = 0; i < 3; ++i) {
        std::this_thread::sleep_for(50ms);
        client.send("X");
    }
    CHECK(client.closed_by_server(1s));
    CHECK(std::chrono::steady_clock::now() - begun < 900ms);
}

TEST_CASE("A busy answer is a 503 with Retry-After")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send(post("/v1/runs", run_body("busy")));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 503);
    CHECK(body_has_error(*reply, "busy"));
    CHECK(reply->body.find(R"("retryable":true)") != std::string::npos);
    CHECK(reply->retry_after == std::to_string(pybox::limits::k_busy_retry_after.count()));
}

TEST_CASE("A keep-alive connection that stays idle after its answer is closed at the idle time")
{
    HttpServerOptions options;
    options.idle_timeout = 300ms;
    RunningServer server(options);
    RawClient client(server.socket_path());
    client.send(get("/v1/ping", "keep-alive"));
    REQUIRE(client.read_reply());
    const auto answered = std::chrono::steady_clock::now();
    CHECK(client.closed_by_server(2s));
    const auto idle_for = std::chrono::steady_clock::now() - answered;
    CHECK(idle_for >= 250ms);
    CHECK(idle_for < 1s);
}

TEST_CASE("A connection that never begins a request is closed at the idle time, before the request deadline")
{
    HttpServerOptions options;
    options.idle_timeout = 200ms;
    options.request_read_timeout = 5s;
    RunningServer server(options);
    RawClient client(server.socket_path());
    const auto begun = std::chrono::steady_clock::now();
    CHECK(client.closed_by_server(2s));
    CHECK(std::chrono::steady_clock::now() - begun < 1s);
}

TEST_CASE("At the connection cap the connection idle the longest makes room for a new one")
{
    HttpServerOptions options;
    options.max_connections = 3;
    RunningServer server(options);
    std::vector<std::unique_ptr<RawClient>> idle;
    for (int i = 0; i < 3; ++i) {
        idle.push_back(std::make_unique<RawClient>(server.socket_path()));
        std::this_thread::sleep_for(30ms);  // accepted in this order
    }
    RawClient runner(server.socket_path());
    runner.send(post("/v1/runs", run_body("print(1)")));
    const auto reply = runner.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(idle[0]->closed_by_server(1s));
    idle[1]->send(get("/v1/ping"));  // the younger idle ones were kept
    const auto ping = idle[1]->read_reply();
    REQUIRE(ping);
    CHECK(ping->status == 200);
}

TEST_CASE("At the connection cap with none idle a new connection gets 503 too_many_connections and is closed")
{
    HttpServerOptions options;
    options.max_connections = 2;
    RunningServer server(options);
    RawClient first(server.socket_path());
    RawClient second(server.socket_path());
    first.send(post("/v1/runs", run_body("wait")));
    second.send(post("/v1/runs", run_body("wait")));
    std::this_thread::sleep_for(100ms);

    RawClient refused(server.socket_path());
    refused.send(get("/v1/ping"));
    const auto reply = refused.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 503);
    CHECK(body_has_error(*reply, "too_many_connections"));
    CHECK(reply->retry_after == std::to_string(pybox::limits::k_busy_retry_after.count()));
    CHECK(refused.closed_by_server());

    first.close();  // a slot is free again
    std::this_thread::sleep_for(100ms);
    RawClient later(server.socket_path());
    later.send(get("/v1/ping"));
    const auto ping = later.read_reply();
    REQUIRE(ping);
    CHECK(ping->status == 200);
}

namespace {

// How many runs were cancelled within 2 s of a client that sent `request` (a run that waits) and
// left 100 ms later.
int cancellations_after_leaving(const std::string& request)
{
    RunningServer server;
    {
        RawClient client(server.socket_path());
        client.send(request);
        std::this_thread::sleep_for(100ms);
        client.close();
    }
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (server.services.runs.cancellations() == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    return server.services.runs.cancellations();
}

}  // namespace

TEST_CASE("A client that disconnects during a run fires the run's cancellation slot")
{
    CHECK(cancellations_after_leaving(post("/v1/runs", run_body("wait"))) == 1);
}

TEST_CASE("A streamed run answers chunked NDJSON events, then the answer an unstreamed run gets, byte for byte")
{
    RunningServer server;
    RawClient streamed(server.socket_path());
    streamed.send(streamed_run(run_body("print(1)")));
    const auto events = streamed.read_reply(3s);
    RawClient plain(server.socket_path());
    plain.send(post("/v1/runs", run_body("print(1)")));
    const auto answer = plain.read_reply(3s);
    REQUIRE(events);
    REQUIRE(answer);
    CHECK(events->status == 200);
    CHECK(events->content_type == "application/x-ndjson");
    CHECK_FALSE(events->has_content_length);  // chunked: written as the run goes
    const auto lines = lines_of(events->body);
    REQUIRE(lines.size() == 5);
    CHECK(lines[0] == R"({"event":"started","run_id":"11111111111111111111111111111111"})");
    CHECK(lines[1] == R"({"event":"stdout","encoding":"utf-8","data":"out\n"})");
    CHECK(lines[2] == R"({"event":"stderr","encoding":"base64","data":"/w=="})");  // 0xFF; the "é" held back
    CHECK(lines[3] == "{\"event\":\"stderr\",\"encoding\":\"utf-8\",\"data\":\"\xc3\xa9\"}");
    CHECK(lines[4] == R"({"event":"receipt","answer":)" + answer->body.substr(0, answer->body.size() - 1) + "}");
}

TEST_CASE("A run whose receipt was not kept says so and why: in a header unstreamed, in the receipt event streamed")
{
    RunningServer server;
    RawClient plain(server.socket_path());
    plain.send(post("/v1/runs", run_body("unkept")));
    const auto answer = plain.read_reply(3s);
    REQUIRE(answer);
    CHECK(answer->status == 200);
    CHECK(answer->receipt_not_kept == FakeRunService::k_not_kept);
    RawClient streamed(server.socket_path());
    streamed.send(streamed_run(run_body("unkept")));
    const auto events = streamed.read_reply(3s);
    REQUIRE(events);
    CHECK(events->receipt_not_kept.empty());
    CHECK(lines_of(events->body).back() == R"({"event":"receipt","answer":)" + answer->body.substr(0, answer->body.size() - 1) +
                                               R"(,"receipt_not_kept":")" + FakeRunService::k_not_kept + "\"}");
    RawClient kept(server.socket_path());
    kept.send(post("/v1/runs", run_body("print(1)")));
    const auto kept_answer = kept.read_reply(3s);
    REQUIRE(kept_answer);
    CHECK(kept_answer->receipt_not_kept.empty());
}

TEST_CASE("A streamed run refused before it starts gets the plain error answer, its status and Retry-After")
{
    RunningServer server;
    RawClient client(server.socket_path());
    client.send(streamed_run(run_body("busy")));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 503);
    CHECK(reply->content_type == "application/json");
    CHECK(body_has_error(*reply, "busy"));
    CHECK_FALSE(reply->retry_after.empty());
}

TEST_CASE("A client that leaves a streamed run fires the run's cancellation slot")
{
    CHECK(cancellations_after_leaving(streamed_run(run_body("wait"))) == 1);
}

TEST_CASE("Concurrent runs each get their own receipt")
{
    RunningServer server;
    const auto begun = std::chrono::steady_clock::now();
    std::vector<std::future<std::optional<Reply>>> replies;
    for (int i = 0; i < 4; ++i) {
        replies.push_back(std::async(std::launch::async, [&server, i] {
            RawClient client(server.socket_path());
            client.send(post("/v1/runs", run_body("print(" + std::to_string(i) + ")")));
            return client.read_reply(3s);
        }));
    }
    for (int i = 0; i < 4; ++i) {
        const auto reply = replies[static_cast<std::size_t>(i)].get();
        REQUIRE(reply);
        CHECK(reply->status == 200);
        CHECK(reply->body.find(pybox::sha256_hex("print(" + std::to_string(i) + ")")) != std::string::npos);
    }
    CHECK(std::chrono::steady_clock::now() - begun < 1s);  // 4 runs of 300 ms overlapped
    CHECK(server.services.runs.cancellations() == 0);
}

TEST_CASE("A second server refuses a socket another server answers on")
{
    RunningServer server;
    net::io_context io;
    FakeServices fakes;
    HttpServer second(io.get_executor(), server.socket_path(), fakes.all());
    const auto started = second.start();
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "daemon_already_running");
}

TEST_CASE("A stale socket file nobody answers on is replaced")
{
    TempDir dir;
    const auto path = dir.path() / "pyboxd.sock";
    net::io_context io;
    {
        Local::acceptor stale(io, Local::endpoint(path.string()));  // closing leaves the file behind
    }
    REQUIRE(fs::is_socket(fs::symlink_status(path)));
    FakeServices fakes;
    HttpServer server(io.get_executor(), path, fakes.all());
    CHECK(server.start().has_value());
    server.stop();
    io.run();
    CHECK_FALSE(fs::exists(path));
}

// A router over the fakes, each request handled to its end on one io_context.
struct RouterCalls {
    net::io_context io;
    FakeServices fakes;
    pybox::daemon::ApiRouter router{fakes.all()};

    pybox::daemon::ApiResponse answer(const pybox::daemon::Caller& caller, std::string method, std::string target,
                                      std::string body = "")
    {
        pybox::daemon::ApiResponse response;
        net::co_spawn(io,
                      router.handle(pybox::daemon::ApiRequest{std::move(method), std::move(target), std::move(body)}, caller, {}),
                      [&](std::exception_ptr, pybox::daemon::ApiResponse r) { response = std::move(r); });
        io.restart();
        io.run();
        return response;
    }
};

TEST_CASE("The router: a caller who is not admin is refused what manages the engine and images, runs as itself, "
          "and sees its own attempts")
{
    using pybox::daemon::Caller;
    RouterCalls calls;
    FakeServices& fakes = calls.fakes;
    const Caller member{1001, false}, root{0, true};
    for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
             {"POST", "/v1/vm/start"}, {"POST", "/v1/vm/stop"}, {"POST", "/v1/setup"},
             {"POST", "/v1/images/build"}, {"POST", "/v1/images/remove"}}) {
        INFO(method << " " << target);
        const auto refused = calls.answer(member, method, target, "{}");
        CHECK(refused.status == 403);
        CHECK_THAT(refused.body, Catch::Contains("\"forbidden\"") && Catch::Contains("only root manages"));
    }
    CHECK(calls.answer(root, "POST", "/v1/vm/start").status == 200);
    CHECK(calls.answer(member, "GET", "/v1/vm/status").status == 200);

    CHECK(calls.answer(member, "POST", "/v1/runs", R"J({"source": "print(1)"})J").status == 200);
    CHECK(fakes.runs.last_owner == 1001u);
    CHECK(calls.answer(member, "GET", "/v1/attempts").status == 200);
    CHECK(fakes.attempts.last_viewer == std::optional<std::uint32_t>(1001));
    CHECK(calls.answer(root, "GET", "/v1/attempts").status == 200);
    CHECK_FALSE(fakes.attempts.last_viewer.has_value());
    const auto repaired = calls.answer(member, "POST", "/v1/repair", R"J({"source": "print(1)", "rounds": 2})J");
    CHECK(repaired.status == 200);
    CHECK_THAT(repaired.body, Catch::Contains("\"rounds_allowed\":2"));
    CHECK(fakes.repair.last_owner == 1001u);
    CHECK(calls.answer(member, "POST", "/v1/repair", R"J({"source": "print(1)", "rounds": 9})J").status == 400);
}

TEST_CASE("The router answers the run service's receipt as it is and serves kept receipts to their owner")
{
    using pybox::daemon::Caller;
    RouterCalls calls;
    FakeServices& fakes = calls.fakes;
    const Caller member{1001, false}, root{0, true};
    const auto run = calls.answer(member, "POST", "/v1/runs", R"J({"source": "print(1)"})J");
    CHECK(run.status == 200);
    CHECK(fakes.runs.last_owner == 1001u);
    pybox::proto::Receipt answered;
    answered.source_sha256 = pybox::sha256_hex("print(1)");
    CHECK(run.body == pybox::proto::issue_receipt(answered, http_fakes_key()).text());

    const auto list = calls.answer(member, "GET", "/v1/receipts");
    CHECK(list.status == 200);
    CHECK(fakes.receipts.last_viewer == std::optional<std::uint32_t>(1001));
    CHECK(pybox::proto::receipt_list_from_json(boost::json::parse(list.body), pybox::util::ReadMode::strict).has_value());
    CHECK(calls.answer(root, "GET", "/v1/receipts").status == 200);
    CHECK_FALSE(fakes.receipts.last_viewer.has_value());

    const auto one = calls.answer(member, "GET", "/v1/receipts/" + std::string(32, 'b'));
    CHECK(one.status == 404);
    CHECK_THAT(one.body, Catch::Contains("no_such_receipt"));
    CHECK(fakes.receipts.last_viewer == std::optional<std::uint32_t>(1001));
    CHECK(calls.answer(member, "GET", "/v1/receipts/a/b").status == 404);
    CHECK(calls.answer(member, "POST", "/v1/receipts/" + std::string(32, 'b')).status == 405);
}

TEST_CASE("An activated listener is served as it is, and stopping leaves its socket file")
{
    TempDir dir;
    const auto path = dir.path() / "pyboxd.sock";
    net::io_context io;
    Local::acceptor manager(io, Local::endpoint(path.string()));  // what the service manager made
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_write, fs::perm_options::replace);
    RawClient early(path);  // connected before the server exists: waits in the listen queue
    early.send(get("/v1/ping"));
    FakeServices fakes;
    HttpServerOptions options;
    options.activated_listener = manager.release();
    HttpServer server(io.get_executor(), path, fakes.all(), options);
    REQUIRE(server.start().has_value());
    std::thread serving([&io] { io.run(); });
    const auto reply = early.read_reply();
    REQUIRE(reply.has_value());
    CHECK(reply->status == 200);
    server.stop();
    serving.join();
    CHECK(fs::is_socket(fs::symlink_status(path)));
    // The service manager's mode is kept: start() did not make it 0600.
    CHECK((fs::status(path).permissions() & fs::perms::group_write) != fs::perms::none);
}
