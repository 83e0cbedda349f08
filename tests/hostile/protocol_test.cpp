// docs/hostile.md cases 31-36: bad bytes sent straight to the daemon's socket (chunked framing,
// extensions and trailers among them), requests that ask for more than the policy allows, and
// several clients at once. Each case ends clean.
#include "tests/hostile/hostile.hpp"

#include "common/limits.hpp"
#include "common/process.hpp"
#include "tests/hostile/raw_client.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <set>
#include <thread>
#include <vector>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

// Sends `request` and expects exactly one answer with `status` and the connection closed.
HttpAnswer expect_one_answer_and_close(const std::string& request, int status)
{
    const auto reply = raw_exchange(daemon_socket(), request);
    const auto answers = split_answers(reply.bytes);
    INFO("received: " << reply.bytes.substr(0, 600));
    CHECK(reply.closed_by_server);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == status);
    return answers[0];
}

}  // namespace

// docs/hostile.md case 31
TEST_CASE("Malformed JSON bodies get 400 with a clear error, nothing is created, and the next request succeeds")
{
    const std::vector<std::pair<std::string, std::string>> bodies{
        {"truncated", R"J({"source": "print(1)")J"},
        {"trailing bytes", R"J({"source": "print(1)"} {"source": "print(2)"})J"},
        {"100,000 nested brackets", std::string(100'000, '[') + std::string(100'000, ']')},
        {"40,000 nested objects", [] {
             std::string nested;
             for (int i = 0; i < 40'000; ++i) nested += "{\"a\":";
             return nested + "1" + std::string(40'000, '}');
         }()},
        {"source of the wrong type", R"J({"source": 42})J"},
        {"timeout of the wrong type", R"J({"source": "print(1)", "timeout_s": "2"})J"},
        {"an array instead of an object", R"J(["print(1)"])J"},
        {"duplicate keys", R"J({"source": "print(1)", "source": "print(2)"})J"},
        {"invalid UTF-8", "{\"source\": \"print(1) \xff\xfe\"}"},
        {"a lone surrogate escape", R"J({"source": "print('\ud800')"})J"},
        {"empty", ""},
    };
    const auto attempts_before = attempt_files();
    for (const auto& [what, body] : bodies) {
        INFO(what);
        const auto reply = raw_exchange(daemon_socket(), post_runs(body));
        const auto answers = split_answers(reply.bytes);
        REQUIRE(answers.size() == 1);
        CHECK(answers[0].status == 400);
        const auto code = error_code(answers[0]);
        CHECK(code.rfind("invalid_", 0) == 0);
    }
    CHECK(new_attempt_files(attempts_before).empty());
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 31
TEST_CASE("After a malformed JSON body the same keep-alive connection answers the next request")
{
    const auto reply = raw_exchange(daemon_socket(), post_runs(R"J({"source": )J", "keep-alive") + k_ping);
    const auto answers = split_answers(reply.bytes);
    REQUIRE(answers.size() == 2);
    CHECK(answers[0].status == 400);
    CHECK(error_code(answers[0]) == "invalid_json");
    CHECK(answers[1].status == 200);
    CHECK(json::parse(answers[1].body).at("daemon") == "pyboxd");
    check_ended_clean();
}

// docs/hostile.md case 32
TEST_CASE("Conflicting body lengths get one 400 answer and the connection closes, so nothing is smuggled")
{
    const std::string smuggled = "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\n\r\n";
    const std::vector<std::pair<std::string, std::string>> requests{
        {"two Content-Length values",
         "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: 2\r\nContent-Length: 41\r\n\r\n{}" + smuggled},
        {"Content-Length with a list",
         "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: 2, 41\r\n\r\n{}" + smuggled},
        {"Content-Length with a list of equal numbers",
         "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: 2, 2\r\n\r\n{}" + smuggled},
        {"Content-Length and chunked",
         "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: 41\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
             smuggled},
        {"a bad chunk size", "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n" +
                                 smuggled},
        {"a negative Content-Length", "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: -1\r\n\r\n" + smuggled},
    };
    for (const auto& [what, request] : requests) {
        INFO(what);
        const auto answer = expect_one_answer_and_close(request, 400);
        CHECK(error_code(answer) == "invalid_http");
    }
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 32
TEST_CASE("A transfer coding other than chunked gets 501 and the connection closes, so nothing is smuggled")
{
    const std::string smuggled = "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\n\r\n";
    for (const std::string coding : {"gzip, chunked", "gzip"}) {
        INFO(coding);
        const auto answer = expect_one_answer_and_close(
            "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: " + coding + "\r\n\r\n2\r\n{}\r\n0\r\n\r\n" + smuggled,
            501);
        CHECK(error_code(answer) == "transfer_coding_unsupported");
    }
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 32
TEST_CASE("A garbage request line gets 400 and the connection closes")
{
    for (const std::string& request : {std::string("HELLO\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
                                      std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15)}) {
        INFO(request);
        expect_one_answer_and_close(request, 400);
    }
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 32
TEST_CASE("A 1 MB header is refused with 431 and the connection closes")
{
    const auto request = "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\nX-Big: " + std::string(1 << 20, 'h') + "\r\n\r\n";
    const auto answer = expect_one_answer_and_close(request, 431);
    CHECK(error_code(answer) == "header_too_large");
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 32
TEST_CASE("10,000 headers are refused with 431 and the connection closes")
{
    std::string request = "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\n";
    for (int i = 0; i < 10'000; ++i) request += "X-H" + std::to_string(i) + ": v\r\n";
    request += "\r\n";
    const auto answer = expect_one_answer_and_close(request, 431);
    CHECK(error_code(answer) == "header_too_large");
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 33
TEST_CASE("A body announced as 10 GB is refused with 413 before it is read and the daemon's memory stays flat")
{
    const auto rss_before = daemon_rss_kib();
    const std::string request =
        "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Type: application/json\r\nContent-Length: 10737418240\r\n\r\n" +
        std::string(4 << 20, 'x');
    const auto reply = raw_exchange(daemon_socket(), request);
    const auto answers = split_answers(reply.bytes);
    INFO("received: " << reply.bytes.substr(0, 600));
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == 413);
    CHECK(error_code(answers[0]) == "body_too_large");
    CHECK(reply.closed_by_server);
    CHECK(reply.write_failed);  // the daemon stopped reading: most of the 4 MiB never went in
    CHECK(reply.elapsed < std::chrono::duration_cast<milliseconds>(limits::k_request_read_timeout));
    CHECK(daemon_rss_kib() < rss_before + 8 * 1024);
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 33
TEST_CASE("A trailer field over 65,535 bytes is refused with 431 and the daemon lives on")
{
    const std::string request = "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "2\r\n{}\r\n0\r\nX-T: " + std::string(65'540, 't') + "\r\n\r\n";
    const auto answer = expect_one_answer_and_close(request, 431);
    CHECK(error_code(answer) == "header_too_large");
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 33
TEST_CASE("Chunk extensions and trailers of 32 MiB on four connections at once get 431 and the daemon's peak memory stays within 16 MiB")
{
    const std::string chunked = "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: chunked\r\n\r\n";
    const std::string extension = chunked + "2;x=" + std::string(32 << 20, 'e') + "\r\n{}\r\n0\r\n\r\n";
    std::string trailer = chunked + "2\r\n{}\r\n0\r\n";  // 32 Ki fields of 1 KiB, each within Beast's field limit
    const std::string field = "X-T: " + std::string(1'017, 't') + "\r\n";
    for (int i = 0; i < 32 * 1024; ++i) trailer += field;
    trailer += "\r\n";
    std::string fields = chunked + "2\r\n{}\r\n0\r\n";  // the issue's 50,000 small fields
    for (int i = 0; i < 50'000; ++i) fields += "X-" + std::to_string(i) + ": v\r\n";
    fields += "\r\n";

    reset_daemon_peak_rss();
    const auto rss_before = daemon_rss_kib();
    const std::vector<const std::string*> requests{&extension, &extension, &trailer, &fields};
    std::vector<RawReply> replies(requests.size());
    std::vector<std::thread> clients;
    for (std::size_t i = 0; i < requests.size(); ++i)
        clients.emplace_back([&, i] { replies[i] = raw_exchange(daemon_socket(), *requests[i]); });
    for (auto& client : clients) client.join();
    const auto peak = daemon_peak_rss_kib();
    INFO("daemon RSS " << rss_before << " KiB before, peak " << peak << " KiB");
    for (const auto& reply : replies) {
        const auto answers = split_answers(reply.bytes);
        INFO("received: " << reply.bytes.substr(0, 600));
        REQUIRE(answers.size() == 1);
        CHECK(answers[0].status == 431);
        CHECK(error_code(answers[0]) == "header_too_large");
        CHECK(reply.closed_by_server);
    }
    CHECK(peak < rss_before + 16 * 1024);
    check_ping_answers();
    check_ended_clean();
}

// docs/hostile.md case 34
TEST_CASE("200 connections trickling headers are closed at the header deadline while a normal client gets its run")
{
    constexpr std::size_t k_slow = 200;
    const auto deadline = limits::k_request_read_timeout;
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::optional<milliseconds>> closed_after;
    std::thread slow([&] { closed_after = trickle_headers(daemon_socket(), k_slow, milliseconds(200), deadline + milliseconds(5'000)); });
    std::this_thread::sleep_for(milliseconds(1'000));
    const auto run = try_run_pybox({"exec", "-", "--json"}, "print('served')\n");
    const auto served_after = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
    slow.join();
    REQUIRE(run.has_value());
    CHECK(run->exit_code == 0);
    CHECK(captured(json::parse(run->output), "stdout") == "served\n");
    REQUIRE(closed_after.size() == k_slow);
    std::size_t open_past_deadline = 0, closed_before_served = 0;
    for (const auto& closed : closed_after) {
        if (!closed || *closed > deadline + milliseconds(2'000)) ++open_past_deadline;
        else if (*closed < served_after) ++closed_before_served;
    }
    INFO("normal run answered after " << served_after.count() << " ms");
    CHECK(open_past_deadline == 0);
    CHECK(closed_before_served == 0);  // the slow ones were all still connected while it ran
    check_ended_clean();
}

// docs/hostile.md case 35
TEST_CASE("A request that asks for more than the policy allows is refused with 400 and creates nothing")
{
    const std::vector<std::string> extras{
        R"J("memory": 1073741824)J",         R"J("memory_bytes": 1073741824)J", R"J("network": "host")J",
        R"J("privileged": true)J",           R"J("user": "0:0")J",              R"J("binds": ["/:/host"])J",
        R"J("pids": 100000)J",               R"J("cap_add": ["ALL"])J",         R"J("HostConfig": {"Privileged": true})J",
        R"J("seccomp": "unconfined")J",      R"J("readonly_root": false)J",     R"J("command": ["/bin/sh"])J",
    };
    const auto attempts_before = attempt_files();
    for (const auto& extra : extras) {
        INFO(extra);
        const auto reply = raw_exchange(daemon_socket(), post_runs(R"J({"source": "print(1)", )J" + extra + "}"));
        const auto answers = split_answers(reply.bytes);
        REQUIRE(answers.size() == 1);
        CHECK(answers[0].status == 400);
        CHECK(error_code(answers[0]).rfind("invalid_", 0) == 0);
    }
    CHECK(labelled_boxes().empty());
    CHECK(new_attempt_files(attempts_before).empty());
    // The same request without the extra key is run, with the daemon's fixed policy.
    const auto reply = raw_exchange(daemon_socket(), post_runs(R"J({"source": "print(1)"})J"), milliseconds(60'000));
    const auto answers = split_answers(reply.bytes);
    REQUIRE(answers.size() == 1);
    REQUIRE(answers[0].status == 200);
    const auto receipt = json::parse(answers[0].body);
    CHECK(receipt.at("configured").at("memory_bytes") == 134217728);
    CHECK(receipt.at("configured").at("network") == "none");
    CHECK(receipt.at("configured").at("user") == "10000:10000");
    check_ended_clean();
}

// docs/hostile.md case 36
TEST_CASE("Several clients at once each get their own receipt and every box is removed")
{
    constexpr int k_clients = 4;
    std::vector<Expected<ProcessResult>> results(k_clients, make_error("not_run", "not run"));
    std::vector<std::thread> clients;
    for (int i = 0; i < k_clients; ++i)
        clients.emplace_back([&results, i] {
            results[static_cast<std::size_t>(i)] = try_run_pybox(
                {"exec", "-", "--json", "--timeout", "5"},
                "import sys, time\ntime.sleep(0.3)\nprint('client " + std::to_string(i) + "')\nprint('err " +
                    std::to_string(i) + "', file=sys.stderr)\n");
        });
    for (auto& client : clients) client.join();
    std::set<std::string> run_ids, container_ids;
    for (int i = 0; i < k_clients; ++i) {
        INFO("client " << i);
        const auto& result = results[static_cast<std::size_t>(i)];
        REQUIRE(result.has_value());
        INFO("stderr: " << result->error_output);
        CHECK(result->exit_code == 0);
        const auto receipt = json::parse(result->output);
        CHECK(captured(receipt, "stdout") == "client " + std::to_string(i) + "\n");
        CHECK(captured(receipt, "stderr") == "err " + std::to_string(i) + "\n");
        CHECK(receipt.at("cleanup").at("status") == "REMOVED");
        run_ids.insert(std::string(receipt.at("identity").at("run_id").as_string()));
        container_ids.insert(std::string(receipt.at("container_id").as_string()));
    }
    CHECK(run_ids.size() == k_clients);
    CHECK(container_ids.size() == k_clients);
    check_ended_clean();
}
