// docs/hostile.md cases 45 and 46: many clients at once, and connections held open to starve others.
// Every run request is answered with a receipt or, at once, a clear 503 busy (nothing ran);
// no client waits past its time limit; idle connections neither keep a run out nor stay for
// ever. Each case prints what it measured.
#include "tests/hostile/hostile.hpp"

#include "common/limits.hpp"
#include "tests/hostile/raw_client.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>
#include <vector>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t k_clients = 80;
// "At once": a refusal never waits for a run.
constexpr milliseconds k_at_once{3'000};

std::string sleeper(std::size_t i)
{
    return "import time\ntime.sleep(0.2)\nprint(" + std::to_string(i) + ")\n";
}

bool has_retry_after(const HttpAnswer& answer)
{
    return answer.head.find("\r\nRetry-After: " + std::to_string(limits::k_busy_retry_after.count()) + "\r\n") !=
           std::string::npos;
}

double seconds_of(milliseconds value) { return static_cast<double>(value.count()) / 1000.0; }

}  // namespace

// docs/hostile.md case 45
TEST_CASE("80 run requests at once: each gets its receipt or, at once, 503 busy with Retry-After")
{
    std::vector<RawReply> replies(k_clients);
    std::vector<std::thread> clients;
    for (std::size_t i = 0; i < k_clients; ++i)
        clients.emplace_back([&replies, i] {
            const std::string body = json::serialize(json::object{{"source", sleeper(i)}, {"timeout_s", 5}});
            replies[i] = raw_exchange(daemon_socket(), post_runs(body), milliseconds(180'000));
        });
    for (auto& client : clients) client.join();

    std::size_t receipts = 0, busy = 0, queued = 0;
    milliseconds longest_receipt{0}, longest_busy{0};
    for (std::size_t i = 0; i < k_clients; ++i) {
        INFO("client " << i << ": " << replies[i].bytes.substr(0, 400));
        const auto answers = split_answers(replies[i].bytes);
        REQUIRE(answers.size() == 1);
        if (answers[0].status == 200) {
            ++receipts;
            longest_receipt = std::max(longest_receipt, replies[i].elapsed);
            const auto receipt = json::parse(answers[0].body);
            CHECK(captured(receipt, "stdout") == std::to_string(i) + "\n");
            const auto& timing = receipt.at("lifecycle").at("timing");
            const double queued_s = timing.at("queued_s").to_number<double>();
            const double total_s = timing.at("total_s").to_number<double>();
            if (queued_s > 0.1) ++queued;
            // The run's own timings leave the queue out: they fit in the time the client waited
            // after the queue, and its run phase is the program's 0.2 s, not the wait.
            CHECK(queued_s + total_s <= seconds_of(replies[i].elapsed) + 0.05);
            CHECK(run_phase_s(receipt) < 2.0);
        } else {
            ++busy;
            longest_busy = std::max(longest_busy, replies[i].elapsed);
            CHECK(answers[0].status == 503);
            CHECK(error_code(answers[0]) == "busy");
            CHECK(has_retry_after(answers[0]));
            CHECK(replies[i].elapsed < k_at_once);
        }
    }
    std::cout << "docs/hostile.md case 45, raw: " << k_clients << " run requests at once: " << receipts << " receipts ("
              << queued << " waited in the queue), " << busy << " busy; longest wait for a receipt "
              << seconds_of(longest_receipt) << " s, for a busy answer " << seconds_of(longest_busy) << " s\n";
    CHECK(receipts + busy == k_clients);
    CHECK(receipts >= limits::k_max_waiting_runs + 1);  // the running one and a full line
    CHECK(queued >= limits::k_max_waiting_runs / 2);
    check_ended_clean();
}

// docs/hostile.md case 45
TEST_CASE("80 pybox exec at once: each prints its output or exits 125 saying busy, and none times out")
{
    std::vector<Expected<ProcessResult>> results(k_clients, make_error("not_run", "not run"));
    std::vector<milliseconds> waited(k_clients);
    std::vector<std::thread> clients;
    for (std::size_t i = 0; i < k_clients; ++i)
        clients.emplace_back([&results, &waited, i] {
            const auto started = Clock::now();
            results[i] = try_run_pybox({"exec", "-", "--timeout", "5"}, sleeper(i));
            waited[i] = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
        });
    for (auto& client : clients) client.join();

    std::size_t receipts = 0, busy = 0;
    milliseconds longest{0};
    for (std::size_t i = 0; i < k_clients; ++i) {
        INFO("client " << i);
        REQUIRE(results[i].has_value());
        const auto& result = *results[i];
        INFO("exit " << result.exit_code << ", stderr: " << result.error_output);
        longest = std::max(longest, waited[i]);
        CHECK(result.error_output.find("did not answer in time") == std::string::npos);
        if (result.exit_code == 0) {
            ++receipts;
            CHECK(result.output == std::to_string(i) + "\n");
        } else {
            ++busy;
            CHECK(result.exit_code == 125);
            CHECK(result.output.empty());
            CHECK(result.error_output.find("busy") != std::string::npos);
            CHECK(result.error_output.find("nothing ran") != std::string::npos);
        }
    }
    std::cout << "docs/hostile.md case 45, pybox: " << k_clients << " clients at once: " << receipts << " ran, " << busy
              << " exited 125 busy; longest client " << seconds_of(longest) << " s\n";
    CHECK(receipts + busy == k_clients);
    CHECK(receipts >= limits::k_max_waiting_runs + 1);
    check_ended_clean();
}

// docs/hostile.md case 46
TEST_CASE("256 idle connections of the same user: a run still gets through, and the idle ones are closed")
{
    const auto opened = Clock::now();
    IdleConnections idle(daemon_socket(), limits::k_max_connections);
    std::this_thread::sleep_for(milliseconds(300));
    const auto run = try_run_pybox({"exec", "-", "--json"}, "print('through')\n");
    const auto run_done = Clock::now();
    REQUIRE(run.has_value());
    INFO("stderr: " << run->error_output);
    CHECK(run->exit_code == 0);
    CHECK(captured(json::parse(run->output), "stdout") == "through\n");
    const auto evicted = idle.closed_by_server();
    CHECK(evicted >= 1);  // the one idle the longest made room
    CHECK(run_done - opened < limits::k_idle_connection_timeout);  // so the room was made, not waited for

    const auto all_closed_by = opened + limits::k_idle_connection_timeout + milliseconds(3'000);
    while (idle.closed_by_server() < limits::k_max_connections && Clock::now() < all_closed_by)
        std::this_thread::sleep_for(milliseconds(50));
    const auto closed_after = std::chrono::duration_cast<milliseconds>(Clock::now() - opened);
    std::cout << "docs/hostile.md case 46: " << limits::k_max_connections << " idle connections; the run got through in "
              << seconds_of(std::chrono::duration_cast<milliseconds>(run_done - opened)) << " s after " << evicted
              << " was closed to make room; all closed as idle after " << seconds_of(closed_after) << " s\n";
    CHECK(idle.closed_by_server() == limits::k_max_connections);
    CHECK(closed_after >= limits::k_idle_connection_timeout);
    check_ended_clean();
}

// docs/hostile.md case 46
TEST_CASE("With every connection busy sending a request, a new one gets 503 too_many_connections at once")
{
    const auto deadline = limits::k_request_read_timeout;
    std::vector<std::optional<milliseconds>> closed_after;
    std::thread slow([&] {
        closed_after = trickle_headers(daemon_socket(), limits::k_max_connections, milliseconds(200),
                                       deadline + milliseconds(5'000));
    });
    std::this_thread::sleep_for(milliseconds(1'500));  // each has begun its request: none is idle

    const auto reply = raw_exchange(daemon_socket(), "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\n\r\n", milliseconds(5'000));
    const auto client = try_run_pybox({"exec", "-"}, "print(1)\n");
    slow.join();

    const auto answers = split_answers(reply.bytes);
    INFO("received: " << reply.bytes);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == 503);
    CHECK(error_code(answers[0]) == "too_many_connections");
    CHECK(has_retry_after(answers[0]));
    CHECK(reply.closed_by_server);
    CHECK(reply.elapsed < k_at_once);
    REQUIRE(client.has_value());
    INFO("pybox stderr: " << client->error_output);
    CHECK(client->exit_code == 125);
    CHECK(client->error_output.find("none is idle") != std::string::npos);
    std::size_t open_past_deadline = 0;
    for (const auto& closed : closed_after)
        if (!closed || *closed > deadline + milliseconds(2'000)) ++open_past_deadline;
    CHECK(open_past_deadline == 0);
    check_ended_clean();  // and once they are gone, a run gets through
}

// docs/hostile.md case 46
TEST_CASE("A keep-alive connection left idle after its answer is closed at the idle time")
{
    const auto reply = raw_exchange(daemon_socket(), "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\n\r\n",
                                    limits::k_idle_connection_timeout + milliseconds(5'000));
    const auto answers = split_answers(reply.bytes);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == 200);
    CHECK(reply.closed_by_server);
    CHECK(reply.elapsed >= limits::k_idle_connection_timeout);
    CHECK(reply.elapsed < limits::k_idle_connection_timeout + milliseconds(1'500));
}
