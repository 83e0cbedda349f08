// The pure parts of the pybox client: reading the program, rendering daemon answers, and the
// answer when no daemon listens. No daemon needed.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"

#include "common/ids.hpp"
#include "common/version.hpp"
#include "proto/answers.hpp"
#include "proto/api.hpp"
#include "tests/support/sample_answers.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <thread>

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using pybox::client::read_program;
using pybox::proto::EngineStartAnswer;
using pybox::proto::EngineStatus;
using pybox::util::ReadMode;

}  // namespace

TEST_CASE("A program on standard input is read exactly")
{
    std::istringstream input(std::string("print(1)\n\xff\0x", 12));
    const auto program = read_program("-", input);
    REQUIRE(program.has_value());
    CHECK(*program == std::string("print(1)\n\xff\0x", 12));
}

TEST_CASE("A program of more than 65,536 bytes on standard input is refused")
{
    std::istringstream input(std::string(65'537, 'a'));
    const auto program = read_program("-", input);
    REQUIRE_FALSE(program.has_value());
    CHECK(program.error().code == "source_too_large");
}

TEST_CASE("A program of exactly 65,536 bytes is accepted")
{
    std::istringstream input(std::string(65'536, 'a'));
    CHECK(read_program("-", input).has_value());
}

TEST_CASE("A missing program file is a clear error")
{
    std::istringstream unused;
    const auto program = read_program("/nonexistent/pybox-program.py", unused);
    REQUIRE_FALSE(program.has_value());
    CHECK(program.error().message.find("/nonexistent/pybox-program.py") != std::string::npos);
}

TEST_CASE("A verified engine start reads Running and verified")
{
    EngineStartAnswer answer;
    answer.running = true;
    answer.verified = true;
    const auto rendered = pybox::client::render_vm_start(answer);
    CHECK(rendered.exit_code == 0);
    CHECK(rendered.text == "Running and verified.\n");
}

TEST_CASE("A failed engine start lists every problem and exits 125")
{
    EngineStartAnswer answer;
    answer.problems = {{"tcp_hosts", "listens on TCP"}, {"seccomp", "not available"}};
    const auto rendered = pybox::client::render_vm_start(answer);
    CHECK(rendered.exit_code == 125);
    CHECK(rendered.text ==
          "Engine started but failed checks; stopped again:\n  tcp_hosts: listens on TCP\n  seccomp: not available\n");
}

TEST_CASE("The engine status shows running, verified, socket and notes")
{
    EngineStatus status;
    status.running = true;
    status.engine_socket = "/r/engine/docker.sock";
    status.notes = {"external engine"};
    const auto rendered = pybox::client::render_vm_status(status);
    CHECK(rendered.text.find("running:  yes") != std::string::npos);
    CHECK(rendered.text.find("verified: no") != std::string::npos);
    CHECK(rendered.text.find("/r/engine/docker.sock") != std::string::npos);
    CHECK(rendered.text.find("external engine") != std::string::npos);
    CHECK(rendered.exit_code == 1);
}

TEST_CASE("An engine left running with a lost image says it is running but not verified")
{
    EngineStartAnswer answer;
    answer.running = true;
    answer.problems = {{"images", "run pybox setup"}};
    const auto rendered = pybox::client::render_vm_start(answer);
    CHECK(rendered.exit_code == 125);
    CHECK(rendered.text == "Engine running but not verified:\n  images: run pybox setup\n");
}

TEST_CASE("Setup prints one line per image: built, up to date, or a status this client does not know")
{
    const auto answer = pybox::proto::setup_answer_from_json(
        boost::json::parse(
            R"({"images":[{"name":"stdlib","image_id":"sha256:abc","recipe_sha256":"r","status":"up_to_date",)"
            R"("seconds":0.01,"tar_sha256":"t","lock_refreshed":false},)"
            R"({"name":"data","image_id":"sha256:def","recipe_sha256":"s","status":"built","seconds":23.44,)"
            R"("tar_sha256":"u","lock_refreshed":false},)"
            R"({"name":"gpu","image_id":"sha256:0a1","recipe_sha256":"v","status":"fetched","seconds":2,)"
            R"("tar_sha256":"w","lock_refreshed":false,"registry":"added later"}],"total_s":25})"),
        ReadMode::tolerant);
    REQUIRE(answer.has_value());
    const auto rendered = pybox::client::render_setup(*answer);
    CHECK(rendered.exit_code == 0);
    CHECK(rendered.text ==
          "stdlib: up to date (sha256:abc)\ndata: built in 23.4 s (sha256:def)\ngpu: fetched in 2.0 s (sha256:0a1)\n");
}

TEST_CASE("An image list with no images says how to build one")
{
    const auto rendered = pybox::client::render_image_list(pybox::proto::ImageList{});
    CHECK(rendered.text.find("pybox setup") != std::string::npos);
}

TEST_CASE("A removed own image is named, and an image the engine kept says why")
{
    pybox::proto::ImageList answer;
    answer.images.push_back({"my-tools", "sha256:abc", "", "", "", false, std::nullopt});
    CHECK(pybox::client::render_image_removed(answer).text == "removed my-tools (sha256:abc)\n");
    answer.images.front().present = std::nullopt;
    answer.images.front().present_unknown_because = "in use";
    CHECK(pybox::client::render_image_removed(answer).text ==
          "removed my-tools (sha256:abc); the engine kept the image: in use\n");
}

TEST_CASE("A missing daemon socket is reported as pyboxd not running")
{
    const auto dir = fs::temp_directory_path() / ("pbx-" + pybox::random_id_128().substr(0, 12));
    const pybox::client::DaemonConnection connection(dir / "pyboxd.sock");
    const auto reply = connection.exchange("GET", "/v1/ping", "", 1s);
    REQUIRE_FALSE(reply.has_value());
    CHECK(reply.error().code == "daemon_not_running");
    CHECK(reply.error().message.find("systemctl --user start pyboxd") != std::string::npos);
}

TEST_CASE("The not-running message names pyboxd's path when it is known")
{
    CHECK(pybox::client::not_running_message(fs::path("/opt/pybox/bin/pyboxd"))
              .starts_with("pyboxd is not running. Start it with: /opt/pybox/bin/pyboxd &"));
}

TEST_CASE("The client's version line names the project's version and the API version")
{
    CHECK(pybox::client::render_client_version() ==
          "pybox " + pybox::version() + " (API " + std::string(pybox::proto::k_api_version) + ")\n");
}

TEST_CASE("The daemon's version line comes from its ping answer")
{
    const auto rendered = pybox::client::render_daemon_version(
        pybox::proto::PingAnswer{true, "pyboxd", "9.8.7", "v1"});
    CHECK(rendered.exit_code == 0);
    CHECK(rendered.text == "pyboxd 9.8.7 (API v1)\n");
}

TEST_CASE("A daemon that does not answer makes its version unknown, says why and exits 125")
{
    const auto rendered = pybox::client::render_daemon_version(
        pybox::make_error("daemon_not_running", "pyboxd is not running."));
    CHECK(rendered.exit_code == pybox::client::k_exit_pybox_failed);
    CHECK(rendered.text == "pybox: the daemon's version is unknown: pyboxd is not running.\n");
}

TEST_CASE("pybox attempts shows settled and unsettled runs, or says there are none")
{
    using pybox::util::ReadMode;
    const auto none = pybox::proto::attempts_answer_from_json(
        boost::json::parse(R"({"unsettled":[],"unsettled_total":0,"settled":[],"damaged_lines":0})"), ReadMode::tolerant);
    REQUIRE(none.has_value());
    CHECK(pybox::client::render_attempts(*none).exit_code == 0);
    CHECK_THAT(pybox::client::render_attempts(*none).text, Catch::Contains("No lost runs"));

    // From a newer daemon: an added key and a `box` value this client does not know.
    const auto some = pybox::proto::attempts_answer_from_json(boost::json::parse(R"({
        "unsettled": [{"run_id": "aaaa", "created_at": "2026-12-01T03:00:09Z", "expires_at": 1, "container_id": "",
                       "readable": true, "in_progress": false}],
        "unsettled_total": 1,
        "settled": [{"run_id": "bbbb", "created_at": "2026-12-01T03:00:00Z", "expires_at": 1, "container_id": "c",
                     "settled_at": "2026-12-01T03:03:00Z", "box": "REMOVED_BY_SWEEP",
                     "box_removed_at": "2026-12-01T03:02:00Z", "run_parent_released": true,
                     "errors": ["box c could not be confirmed removed"]},
                    {"run_id": "cccc", "created_at": "2026-12-01T02:00:00Z", "expires_at": 1, "container_id": "d",
                     "settled_at": "2026-12-01T02:03:00Z", "box": "ADOPTED_BY_ANOTHER_ENGINE",
                     "box_removed_at": null, "run_parent_released": false, "errors": []}],
        "damaged_lines": 2, "a_key_added_later": true})"), ReadMode::tolerant);
    REQUIRE(some.has_value());
    const auto rendered = pybox::client::render_attempts(*some);
    CHECK(rendered.exit_code == 0);
    CHECK_THAT(rendered.text, Catch::Contains("aaaa  started 2026-12-01T03:00:09Z  waiting for the sweep"));
    CHECK_THAT(rendered.text, Catch::Contains("bbbb  started 2026-12-01T03:00:00Z  settled 2026-12-01T03:03:00Z  box "
                                              "REMOVED_BY_SWEEP at 2026-12-01T03:02:00Z"));
    CHECK_THAT(rendered.text, Catch::Contains("before it settled: box c could not be confirmed removed"));
    CHECK_THAT(rendered.text, Catch::Contains("cccc  started 2026-12-01T02:00:00Z  settled 2026-12-01T02:03:00Z  box "
                                              "ADOPTED_BY_ANOTHER_ENGINE\n"));
    CHECK_THAT(rendered.text, Catch::Contains("2 damaged journal lines"));
}

TEST_CASE("The lost-daemon message says the program may have run and how to look it up")
{
    const auto message = pybox::client::lost_daemon_message("pyboxd went away.");
    CHECK(message.starts_with("pyboxd went away. The program may have run."));
    CHECK_THAT(message, Catch::Contains("pybox attempts"));
}

TEST_CASE("A daemon that goes away after it took the request is reported as lost, not as not running")
{
    namespace net = boost::asio;
    using Local = net::local::stream_protocol;
    const auto dir = fs::temp_directory_path() / ("pbx-" + pybox::random_id_128().substr(0, 12));
    fs::create_directories(dir);
    const auto path = dir / "pyboxd.sock";
    net::io_context io;
    Local::acceptor acceptor(io, Local::endpoint(path.string()));
    std::thread daemon([&] {
        Local::socket peer(io);
        acceptor.accept(peer);
        char request[256];
        boost::system::error_code ec;
        peer.read_some(net::buffer(request), ec);  // the request arrives, then the daemon is gone
        peer.close();
    });
    const pybox::client::DaemonConnection connection(path);
    const auto reply = connection.exchange("POST", "/v1/runs", "{}", 5s);
    daemon.join();
    fs::remove_all(dir);
    REQUIRE_FALSE(reply.has_value());
    CHECK(reply.error().code == "daemon_lost");
    CHECK_THAT(reply.error().message, Catch::Contains("went away after it took the request"));
}

TEST_CASE("Setup progress not on a terminal prints a line per new phase, and again only every ten seconds")
{
    using pybox::client::ProgressStyle;
    using pybox::client::render_setup_progress;
    using pybox::proto::SetupProgress;
    const auto plain = ProgressStyle::plain;
    const SetupProgress idle;
    CHECK(render_setup_progress(plain, idle, idle).empty());
    const SetupProgress downloading{"data", "downloading packages with apt...", 12, 12'345'678, 4.0};
    CHECK(render_setup_progress(plain, idle, downloading) ==
          "pybox setup: data: downloading packages with apt... (12 packages, 12.3 MB downloaded, 4.0 s)\n");
    const SetupProgress later{"data", "downloading packages with apt...", 40, 40'000'000, 9.0};
    CHECK(render_setup_progress(plain, downloading, later).empty());
    const SetupProgress much_later{"data", "downloading packages with apt...", 90, 90'000'000, 14.5};
    CHECK(render_setup_progress(plain, downloading, much_later).find("90 packages, 90.0 MB") != std::string::npos);
    const SetupProgress installing{"data", "installing remaining packages inside the chroot...", 90, 90'000'000, 15.0};
    CHECK(render_setup_progress(plain, much_later, installing).find("installing remaining") != std::string::npos);
    CHECK(render_setup_progress(plain, installing, idle).empty());
    CHECK(pybox::client::end_setup_progress(plain, installing).empty());
}

TEST_CASE("Setup progress on a terminal rewrites one line in place at every answer and erases it at the end")
{
    using pybox::client::ProgressStyle;
    using pybox::client::render_setup_progress;
    using pybox::proto::SetupProgress;
    const auto terminal = ProgressStyle::terminal;
    const SetupProgress idle;
    CHECK(render_setup_progress(terminal, idle, idle).empty());
    const SetupProgress downloading{"data", "downloading packages with apt...", 12, 12'345'678, 4.0};
    CHECK(render_setup_progress(terminal, idle, downloading) ==
          "\r\x1b[Kpybox setup: data: downloading pack... (12 packages, 12.3 MB downloaded, 4.0 s)");
    // The same phase a second later is shown again: the elapsed time moves.
    const SetupProgress second_later{"data", "downloading packages with apt...", 13, 13'000'000, 5.0};
    CHECK(render_setup_progress(terminal, downloading, second_later).find("13 packages, 13.0 MB downloaded, 5.0 s") !=
          std::string::npos);
    // A long phase is cut so the line fits one row of the terminal ("\r" returns to its start),
    // keeping the counts and the elapsed time.
    const SetupProgress long_phase{"data", std::string(160, 'x'), 13, 13'000'000, 6.0};
    const auto line = render_setup_progress(terminal, second_later, long_phase);
    CHECK(line.size() == 4 + pybox::client::k_setup_progress_columns);
    CHECK(line.find('\n') == std::string::npos);
    CHECK(line.find("xxx... (13 packages, 13.0 MB downloaded, 6.0 s)") != std::string::npos);
    // Between two images, and at the end, the line is erased.
    CHECK(render_setup_progress(terminal, long_phase, idle) == "\r\x1b[K");
    CHECK(pybox::client::end_setup_progress(terminal, long_phase) == "\r\x1b[K");
    CHECK(pybox::client::end_setup_progress(terminal, idle).empty());
}

TEST_CASE("Setup progress with --quiet writes nothing")
{
    using pybox::client::ProgressStyle;
    using pybox::proto::SetupProgress;
    const SetupProgress idle;
    const SetupProgress downloading{"data", "downloading packages with apt...", 12, 12'345'678, 4.0};
    CHECK(pybox::client::render_setup_progress(ProgressStyle::quiet, idle, downloading).empty());
    CHECK(pybox::client::render_setup_progress(ProgressStyle::quiet, downloading, idle).empty());
    CHECK(pybox::client::end_setup_progress(ProgressStyle::quiet, downloading).empty());
}

TEST_CASE("vm start and status list a pool's engines and succeed only when every engine that takes runs is verified")
{
    auto answer = pybox::test::sample_pool_start();
    answer.verified = true;
    answer.problems.clear();
    const auto started = pybox::client::render_vm_start(answer);
    CHECK(started.exit_code == 125);
    CHECK_THAT(started.text, Catch::Contains("not every engine is verified") &&
                                 Catch::Contains("  e2  NOT verified  busy 0  unix:///e2/docker.sock\n") &&
                                 Catch::Contains("    ping: The engine does not answer.\n"));
    const auto status = pybox::client::render_vm_status(answer);
    CHECK(status.exit_code == 1);
    CHECK_THAT(status.text, Catch::Contains("  local  verified  busy 2  unix:///r/engine/docker.sock\n"));
    answer.engines[1].takes_runs = false;
    CHECK(pybox::client::render_vm_start(answer).exit_code == 0);
    CHECK(pybox::client::render_vm_status(answer).exit_code == 0);
}
