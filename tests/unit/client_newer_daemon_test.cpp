// The built `pybox` client against a fake pyboxd that answers as a newer daemon of the same API
// version would: keys added at every level and enum values this client does not know. The
// client must read them (docs/api.md "Versioning"), never exit 125 because of them.
#include "common/process.hpp"
#include "proto/answers.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/temp_runtime.hpp"
#include "util/json_writer.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using Local = net::local::stream_protocol;
using pybox::proto::CleanupStatus;
using pybox::proto::Receipt;
using pybox::proto::TerminationMechanism;

// Answers one request on the runtime folder's socket with `body` (HTTP 200), on its own thread.
class FakeDaemon {
public:
    FakeDaemon(const pybox::RuntimePaths& paths, std::string body)
        : m_acceptor(m_io, Local::endpoint(paths.daemon_socket().string())), m_body(std::move(body))
    {
        m_acceptor.async_accept([this](boost::system::error_code ec, Local::socket socket) {
            if (!ec) serve(socket);
        });
        m_thread = std::thread([this] { m_io.run(); });
    }
    ~FakeDaemon()
    {
        m_io.stop();
        m_thread.join();
    }
    FakeDaemon(const FakeDaemon&) = delete;
    FakeDaemon& operator=(const FakeDaemon&) = delete;

private:
    void serve(Local::socket& socket)
    {
        boost::beast::flat_buffer buffer;
        http::request<http::string_body> request;
        boost::system::error_code ec;
        http::read(socket, buffer, request, ec);
        http::response<http::string_body> response{http::status::ok, 11};
        response.set(http::field::content_type, "application/json");
        response.body() = m_body + "\n";
        response.prepare_payload();
        http::write(socket, response, ec);
    }

    net::io_context m_io;
    Local::acceptor m_acceptor;
    std::string m_body;
    std::thread m_thread;
};

pybox::ProcessResult run_client(const pybox::RuntimePaths& paths, const std::vector<std::string>& args,
                                const json::value& answer)
{
    const FakeDaemon daemon(paths, pybox::util::to_json_text(answer));
    std::vector<std::string> argv{pybox::test::client_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    pybox::ProcessOptions options;
    options.input = "print('hello')\n";
    options.separate_stderr = true;
    options.timeout = std::chrono::milliseconds(20'000);
    options.env["PYBOX_HOME"] = paths.root().string();
    auto result = pybox::run_process(argv, options);
    REQUIRE(result.has_value());
    return *result;
}

// The program printed to both streams and exited with 3; the receipt as a newer daemon writes it.
json::value newer_receipt(std::string_view mechanism, std::string_view cleanup_status)
{
    Receipt receipt = pybox::test::sample_receipt();
    receipt.observed.termination.exit_code = 3;
    receipt.capture.stdout_stream = {"hello\n", 6};
    receipt.capture.stderr_stream = {"warn\n", 5};
    auto document = pybox::proto::receipt_to_json(receipt);
    pybox::test::add_keys_everywhere(document);
    document.at("observed").at("termination").as_object()["mechanism"] = mechanism;
    document.at("cleanup").as_object()["status"] = cleanup_status;
    return document;
}

}  // namespace

TEST_CASE("pybox exec shows a newer daemon's receipt and exits with the program's exit code")
{
    const pybox::test::TempRuntime runtime;
    const auto run = run_client(runtime.paths, {"exec", "-"}, newer_receipt("TARGET_EXIT_OBSERVED", "HANDED_OVER"));
    CHECK(run.exit_code == 3);
    CHECK(run.output == "hello\n");
    INFO(run.error_output);
    CHECK(run.error_output.starts_with("warn\n\nPyBox receipt · run 5319e024 · image stdlib"));
    CHECK(run.error_output.find("  Exit code             3 (ended by itself)\n") != std::string::npos);
    CHECK(run.error_output.find("  Box                   \"HANDED_OVER\", which this pybox does not know\n") !=
          std::string::npos);
    CHECK(run.error_output.ends_with("Not understood  values from a newer pyboxd; --json shows the whole receipt\n"
                                     "  cleanup.status        HANDED_OVER\n"));
}

TEST_CASE("pybox exec shows a termination mechanism it does not know and exits with the engine's exit code")
{
    const pybox::test::TempRuntime runtime;
    const auto run = run_client(runtime.paths, {"exec", "-"}, newer_receipt("QUEUE_EXPIRED", "REMOVED"));
    CHECK(run.exit_code == 3);
    CHECK(run.output == "hello\n");
    INFO(run.error_output);
    CHECK(run.error_output.find("  Exit code             3 (ended as \"QUEUE_EXPIRED\", which this pybox does not "
                                "know; the engine reported exit code 3)\n") != std::string::npos);
    CHECK(run.error_output.find("  observed.termination.mechanism  QUEUE_EXPIRED\n") != std::string::npos);
}

TEST_CASE("pybox exec --json prints a newer daemon's receipt whole, added keys included")
{
    const pybox::test::TempRuntime runtime;
    const auto receipt = newer_receipt("QUEUE_EXPIRED", "HANDED_OVER");
    const auto run = run_client(runtime.paths, {"exec", "-", "--json"}, receipt);
    CHECK(run.exit_code == 3);
    CHECK(run.error_output.empty());
    CHECK(json::parse(run.output) == receipt);
}

TEST_CASE("pybox vm status reads a newer daemon's answer with added keys")
{
    const pybox::test::TempRuntime runtime;
    pybox::proto::EngineStatus status;
    status.running = true;
    status.verified = true;
    status.engine_socket = "/r/engine/docker.sock";
    auto answer = pybox::proto::to_json(status);
    answer.as_object()["added_later"] = json::object{{"queue", json::array{1, 2}}};
    const auto run = run_client(runtime.paths, {"vm", "status"}, answer);
    CHECK(run.exit_code == 0);
    CHECK(run.output == "running:  yes\nverified: yes\nsocket:   /r/engine/docker.sock\n");
}
