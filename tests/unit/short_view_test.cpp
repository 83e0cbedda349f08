#include "proto/short_view.hpp"

#include <catch2/catch.hpp>

using namespace pybox::proto;
namespace json = boost::json;

namespace {

// The seed's "Your first sealed run": print(6*7) ended by itself.
Receipt normal_run()
{
    Receipt receipt;
    receipt.identity.run_id = "5319e024aa0c4b6e9d1f00112233aabb";
    receipt.identity.image = "stdlib";
    receipt.container_id = std::string(64, 'c');
    receipt.configured.wall_timeout_s = 2.0;
    receipt.configured.guest_timer_s = 3.0;
    receipt.configured.output_limit_bytes = 65'536;
    receipt.configured.policy = *policy_for_image("stdlib");
    receipt.configured.command = box_command(2.0);
    receipt.observed.policy_verified_before_start = true;
    receipt.observed.resources = json::object{{"status", "UNKNOWN"}, {"reason", "not collected"}};
    receipt.observed.termination = {TerminationMechanism::target_exit_observed, 0, std::nullopt, false, 0.07};
    receipt.capture.stdout_stream = {"42\n", 3};
    receipt.capture.output_complete = true;
    receipt.lifecycle.last_phase = "remove";
    receipt.lifecycle.phases = {{"create", 0.0, 0.07, "ok"}, {"run", 0.1, 0.166, "ok"}};
    receipt.lifecycle.total_s = 0.33;
    receipt.cleanup = {CleanupStatus::removed, true, 1, std::nullopt, nullptr};
    receipt.unknown = {{"resources", "the kernel watcher did not run"}};
    return receipt;
}

}  // namespace

TEST_CASE("A normal run renders like the seed's first sealed run")
{
    CHECK(render_short_receipt(normal_run()) ==
          "PyBox receipt · run 5319e024 · image stdlib · 0.166 s of 2 s\n"
          "\n"
          "From the container engine  checked before start, read back after\n"
          "  Exit code             0 (ended by itself)\n"
          "  Settings checked      yes, before the program started\n"
          "  Host folders shared   none\n"
          "  Network               none\n"
          "  Box                   removed and confirmed gone\n"
          "From the kernel\n"
          "  Resources             unknown: the kernel watcher did not run\n"
          "Output\n"
          "  stdout                3 bytes\n"
          "  stderr                0 bytes\n");
}

TEST_CASE("A deadline kill says PyBox stopped the program and shows 124")
{
    Receipt receipt = normal_run();
    receipt.configured.wall_timeout_s = 0.5;
    receipt.observed.termination = {TerminationMechanism::deadline_kill, 137, 9, true, 0.52};
    receipt.lifecycle.phases[1].duration_s = 0.5012;
    receipt.explanations = {{"DEADLINE_KILL", "PyBox sent SIGKILL at the 0.5 s deadline.", {}}};
    const auto view = render_short_receipt(receipt);
    CHECK(view.find("· 0.501 s of 0.5 s\n") != std::string::npos);
    CHECK(view.find("  Exit code             124 (stopped by PyBox at the deadline)\n") != std::string::npos);
    CHECK(view.find("Explanations\n  DEADLINE_KILL         PyBox sent SIGKILL at the 0.5 s deadline.\n") !=
          std::string::npos);
}

TEST_CASE("An unestablished cause gives the reason from unknown")
{
    Receipt receipt = normal_run();
    receipt.observed.termination = {TerminationMechanism::cause_not_established, 137, 9, true, std::nullopt};
    receipt.unknown["exact_termination_cause"] = "the kill and the exit were 3 ms apart";
    CHECK(render_short_receipt(receipt).find(
              "  Exit code             124 (cause not established: the kill and the exit were 3 ms apart)\n") !=
          std::string::npos);
}

TEST_CASE("An out-of-memory run says the engine reported it")
{
    Receipt receipt = normal_run();
    receipt.observed.termination = {TerminationMechanism::out_of_memory, 137, 9, false, 0.3};
    CHECK(render_short_receipt(receipt).find(
              "  Exit code             137 (Out of memory: reported by the engine)\n") != std::string::npos);
}

TEST_CASE("A program killed by a signal it raised itself names the signal")
{
    Receipt receipt = normal_run();
    receipt.observed.termination = {TerminationMechanism::target_exit_observed, 139, 11, false, 0.1};
    CHECK(render_short_receipt(receipt).find(
              "  Exit code             139 (ended by itself: signal 11, SIGSEGV, not sent by PyBox)\n") !=
          std::string::npos);
}

TEST_CASE("A run refused before start says not started and NO for the settings")
{
    Receipt receipt = normal_run();
    receipt.container_id.clear();
    receipt.observed.policy_verified_before_start = false;
    receipt.observed.effective_policy = json::object{{"mismatches", json::array{"Memory", "PidsLimit"}}};
    receipt.observed.termination = {};
    receipt.lifecycle.phases = {{"create", 0.0, 0.07, "ok"}, {"verify", 0.07, 0.01, "failed"}};
    receipt.lifecycle.total_s = 0.12;
    receipt.capture = {};
    receipt.explanations = {{"POLICY_MISMATCH", "The engine did not apply the memory limit.", {}}};
    const auto view = render_short_receipt(receipt);
    CHECK(view.find("· 0.120 s of 2 s\n") != std::string::npos);
    CHECK(view.find("  Exit code             not started\n") != std::string::npos);
    CHECK(view.find("  Settings checked      NO — the engine's settings differed from the policy (Memory, "
                    "PidsLimit)\n") != std::string::npos);
    CHECK(view.find("  Host folders shared   not checked\n") != std::string::npos);
    CHECK(view.find("  POLICY_MISMATCH       The engine did not apply the memory limit.\n") != std::string::npos);
}

TEST_CASE("A box that was never created says so")
{
    Receipt receipt = normal_run();
    receipt.observed.policy_verified_before_start = false;
    receipt.observed.termination = {};
    receipt.cleanup = {CleanupStatus::not_created, false, 0, std::nullopt, nullptr};
    const auto view = render_short_receipt(receipt);
    CHECK(view.find("  Settings checked      NO — no box was created\n") != std::string::npos);
    CHECK(view.find("  Box                   never created\n") != std::string::npos);
}

TEST_CASE("An unconfirmed removal is flagged with the error")
{
    Receipt receipt = normal_run();
    receipt.cleanup = {CleanupStatus::removal_unconfirmed, false, 2, "remove timed out after 3 s", nullptr};
    CHECK(render_short_receipt(receipt).find(
              "  Box                   REMOVAL NOT CONFIRMED — remove timed out after 3 s\n") != std::string::npos);
}

TEST_CASE("Truncated output shows kept and dropped byte counts")
{
    Receipt receipt = normal_run();
    receipt.capture.stdout_stream = {std::string(65'536, 'x'), 100'000};
    receipt.capture.stderr_stream = {"e", 1};
    const auto view = render_short_receipt(receipt);
    CHECK(view.find("  stdout                65536 of 100000 bytes kept, 34464 dropped\n") != std::string::npos);
    CHECK(view.find("  stderr                1 byte\n") != std::string::npos);
}

TEST_CASE("The short view never prints the program's output bytes")
{
    Receipt receipt = normal_run();
    receipt.capture.stdout_stream = {"SECRET-STDOUT\x1b]0;pwned\x07", 24};
    receipt.capture.stderr_stream = {"SECRET-STDERR", 13};
    const auto view = render_short_receipt(receipt);
    CHECK(view.find("SECRET") == std::string::npos);
    CHECK(view.find('\x1b') == std::string::npos);
}

TEST_CASE("Control characters in receipt text are not passed to the terminal")
{
    Receipt receipt = normal_run();
    receipt.capture.stream_error = "broken\x1b[2J stream";
    receipt.explanations = {{"X\x1b", "evil\x07\xc2\x9b message", {}}};
    const auto view = render_short_receipt(receipt);
    CHECK(view.find('\x1b') == std::string::npos);
    CHECK(view.find('\x07') == std::string::npos);
    CHECK(view.find("\xc2\x9b") == std::string::npos);
    CHECK(view.find("  Stream error          broken?[2J stream\n") != std::string::npos);
}
