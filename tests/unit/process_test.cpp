#include "common/process.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

using namespace pybox;
using namespace std::chrono_literals;

TEST_CASE("run_process feeds stdin and keeps stdout and stderr apart")
{
    ProcessOptions options;
    options.input = std::string("bytes\0in", 8);
    options.separate_stderr = true;
    const auto result = run_process({"/bin/sh", "-c", "cat; echo err >&2"}, options);
    REQUIRE(result.has_value());
    CHECK(result->exit_code == 0);
    CHECK(result->output == std::string("bytes\0in", 8));
    CHECK(result->error_output == "err\n");
}

TEST_CASE("run_process keeps at most max_output bytes and counts the rest")
{
    ProcessOptions options;
    options.max_output = 10;
    const auto result = run_process({"/bin/sh", "-c", "printf 0123456789abcdef"}, options);
    REQUIRE(result.has_value());
    CHECK(result->output == "0123456789");
    CHECK(result->output_dropped == 6);
}

TEST_CASE("run_process kills a child that outlives its timeout")
{
    ProcessOptions options;
    options.timeout = 200ms;
    const auto started = std::chrono::steady_clock::now();
    const auto result = run_process({"/bin/sleep", "10"}, options);
    REQUIRE(result.has_value());
    CHECK(result->timed_out);
    CHECK(result->signal == k_signal_kill);
    CHECK(std::chrono::steady_clock::now() - started < 5s);
}

TEST_CASE("Programs are named by absolute path only; PATH is never searched")
{
    const auto result = run_process({"sh", "-c", "true"});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == "spawn_failed");
    CHECK_FALSE(spawn_detached({"sleep", "1"}, "/dev/null").has_value());
}

TEST_CASE("A detached process runs on its own and counts as ended once it exits")
{
    const auto pid = spawn_detached({"/bin/sleep", "0.3"}, "/dev/null");
    REQUIRE(pid.has_value());
    CHECK(process_alive(*pid));
    bool ended = false;
    for (int i = 0; i < 100 && !ended; ++i) {
        std::this_thread::sleep_for(50ms);
        ended = !process_alive(*pid);
    }
    CHECK(ended);
}

TEST_CASE("A missing program is reported by spawn_detached")
{
    const auto pid = spawn_detached({"/nonexistent/program"}, "/dev/null");
    REQUIRE_FALSE(pid.has_value());
    CHECK(pid.error().code == "spawn_failed");
}

TEST_CASE("This process is alive and a pid that does not exist is not")
{
    CHECK(process_alive(current_pid()));
    CHECK_FALSE(process_alive(0));
    CHECK_FALSE(process_alive(1 << 30));
}
