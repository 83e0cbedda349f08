#include "client/short_view.hpp"

#include <catch2/catch.hpp>

using namespace pybox::proto;
using pybox::client::render_short_receipt;
using pybox::client::ViewerHost;
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
    CHECK(render_short_receipt(normal_run(), ViewerHost::linux_host) ==
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

TEST_CASE("A cluster's run says what its network and removal were, no more")
{
    auto receipt = normal_run();
    receipt.unknown[std::string(k_unknown_network_enforcement)] = "not observable from the API";
    receipt.unknown[std::string(k_unknown_node_cleanup)] = "not observed";
    const auto view = render_short_receipt(receipt, ViewerHost::linux_host);
    CHECK_THAT(view, Catch::Contains(
                         "  Network               a network of its own, denied by policy (the enforcement not observed)\n"));
    CHECK_THAT(view, Catch::Contains("  Box                   deleted, its API object confirmed gone (the node's cleanup of "
                                     "its containers not observed)\n"));
    CHECK_THAT(view, !Catch::Contains("removed and confirmed gone"));
}

TEST_CASE("On macOS the short view says Mac folders shared, as the seed does; on Linux Host folders shared")
{
    const auto mac = render_short_receipt(normal_run(), ViewerHost::mac);
    CHECK_THAT(mac, Catch::Contains("  Settings checked      yes, before the program started\n"
                                    "  Mac folders shared    none\n"
                                    "  Network               none\n"));
    CHECK_THAT(mac, !Catch::Contains("Host folders"));
    const auto linux_view = render_short_receipt(normal_run(), ViewerHost::linux_host);
    CHECK_THAT(linux_view, Catch::Contains("  Host folders shared   none\n"));
    CHECK_THAT(linux_view, !Catch::Contains("Mac folders"));
    auto unverified = normal_run();
    unverified.observed.policy_verified_before_start = false;
    CHECK_THAT(render_short_receipt(unverified, ViewerHost::mac), Catch::Contains("  Mac folders shared    not checked\n"));
#if defined(__APPLE__)
    CHECK(pybox::client::this_viewer_host() == ViewerHost::mac);
#else
    CHECK(pybox::client::this_viewer_host() == ViewerHost::linux_host);
#endif
}

TEST_CASE("A run that took a warm box says so under Box, with how long the box waited")
{
    auto receipt = normal_run();
    receipt.lifecycle.warm = true;
    receipt.lifecycle.preparation = Preparation{{{"create", 0.0, 0.01, "ok"}}, 0.1, 4.1274};
    CHECK_THAT(render_short_receipt(receipt),
               Catch::Contains("  Box                   removed and confirmed gone\n"
                               "  Warm box              made and started before the request, waited 4.127 s for "
                               "the program\n"));
    CHECK_THAT(render_short_receipt(normal_run()), !Catch::Contains("Warm box"));
}

TEST_CASE("A run that moved files shows what went in, came back, was skipped or not returned")
{
    Receipt receipt = normal_run();
    FilesRecord files;
    files.inputs = {{"a.csv", 8, std::string(64, 'a')}, {"b.csv", 10, std::string(64, 'b')}};
    files.outputs = {{"plot.png", 1234, std::string(64, 'c')}};
    files.skipped = {{"link", "symlink"}};
    files.skipped_unlisted = 2;
    receipt.files = files;
    const auto shown = render_short_receipt(receipt);
    CHECK(shown.find("Files\n"
                     "  in                    2 files, 18 bytes\n"
                     "  back                  1 file, 1234 bytes\n"
                     "  skipped               3 (files.skipped in --json says why)\n") != std::string::npos);
    receipt.files->errors = {"The box was killed at the deadline\x1b[31m"};
    CHECK(render_short_receipt(receipt).find("  not returned          The box was killed at the deadline?[31m\n") !=
          std::string::npos);
    CHECK(render_short_receipt(normal_run()).find("Files") == std::string::npos);
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
              "  Exit code             137 (cause not established: the kill and the exit were 3 ms apart)\n") !=
          std::string::npos);
}

TEST_CASE("An out-of-memory run says the engine reported it")
{
    Receipt receipt = normal_run();
    receipt.observed.termination = {TerminationMechanism::out_of_memory, 137, 9, false, 0.3};
    CHECK(render_short_receipt(receipt).find(
              "  Exit code             137 (Out of memory: reported by the engine)\n") != std::string::npos);
}

TEST_CASE("An exit code above 128 names the signal it suggests and says none was observed")
{
    Receipt receipt = normal_run();
    receipt.observed.termination = {TerminationMechanism::target_exit_observed, 139, std::nullopt, false, 0.1};
    receipt.observed.termination.inferred_signal = 11;
    CHECK(render_short_receipt(receipt).find("  Exit code             139 (ended by itself; 139 is also what signal 11, "
                                             "SIGSEGV gives, but no signal was observed)\n") != std::string::npos);
}

TEST_CASE("A program that ended before the deadline kill says so")
{
    Receipt receipt = normal_run();
    receipt.observed.termination.deadline_kill_sent = true;
    receipt.observed.termination.deadline_kill_answer = KillAnswer::not_running;
    CHECK(render_short_receipt(receipt).find(
              "  Exit code             0 (ended by itself; PyBox's deadline kill did not end it)\n") != std::string::npos);
}

TEST_CASE("An out-of-memory end the engine did not report says the kernel counted it")
{
    Receipt receipt = normal_run();
    receipt.observed.engine_state = json::object{{"ExitCode", 137}, {"OOMKilled", false}};
    receipt.explanations.push_back(explain("OOM_KILL_COUNTED_BY_KERNEL", "The kernel counted 1 OOM kill(s)."));
    receipt.observed.termination = {TerminationMechanism::out_of_memory, 137, 9, false, 0.3};
    receipt.observed.termination.signal_source = SignalSource::oom_kill;
    CHECK(render_short_receipt(receipt).find(
              "  Exit code             137 (Out of memory: counted by the kernel)\n") != std::string::npos);
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
    const auto view = render_short_receipt(receipt, ViewerHost::linux_host);
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

namespace {

json::object metric(json::value last, json::value max, json::value final)
{
    return json::object{{"last", last}, {"max", max}, {"final", final}};
}

// What the watcher recorded for a program that held 64 MiB.
Receipt watched_run(json::object limits_hit)
{
    Receipt receipt = normal_run();
    receipt.unknown.clear();
    receipt.observed.resources = json::object{
        {"status", "COLLECTED"},
        {"metrics", json::object{{"memory.peak", metric(70778880, 70778880, 71041024)},
                                 {"cpu.stat.usage_usec", metric(55021, 55021, 62808)},
                                 {"pids.peak", metric(6, 6, 6)}}},
        {"limits_hit", std::move(limits_hit)}};
    return receipt;
}

std::string kernel_lines(const Receipt& receipt)
{
    const auto text = render_short_receipt(receipt);
    const auto from = text.find("From the kernel\n");
    return text.substr(from, text.find("Output\n") - from);
}

}  // namespace

TEST_CASE("The kernel's figures show memory peak, CPU time and pids peak, and which limits were hit")
{
    const auto lines = kernel_lines(watched_run({{"pids", true}, {"cpu_throttled", true}, {"oom_kill", false}}));
    CHECK(lines == "From the kernel\n"
                   "  Resources             memory peak 67.8 MiB · CPU 0.063 s · pids peak 6\n"
                   "  Limits                pids limit hit, CPU throttled\n");
}

TEST_CASE("Limits read 'none hit' only when every final counter says so")
{
    CHECK_THAT(kernel_lines(watched_run({{"pids", false}, {"cpu_throttled", false}, {"oom_kill", false}})),
               Catch::Contains("Limits                none hit\n"));
    CHECK_THAT(kernel_lines(watched_run({{"pids", false}, {"cpu_throttled", nullptr}, {"oom_kill", false}})),
               Catch::Contains("none seen (their final counters are unknown)"));
}

TEST_CASE("A figure known only from samples is shown as a lower bound")
{
    auto receipt = watched_run({{"pids", false}, {"cpu_throttled", false}, {"oom_kill", false}});
    receipt.observed.resources.as_object()["metrics"].as_object()["memory.peak"] = metric(1048576, 2097152, nullptr);
    CHECK_THAT(kernel_lines(receipt), Catch::Contains("memory peak ≥ 2.0 MiB"));
}

TEST_CASE("Unreadable watcher output is shown with the reason, never as figures")
{
    auto receipt = normal_run();
    receipt.observed.resources = json::object{{"status", "UNREADABLE"}};
    receipt.unknown = {{"resources", "the kernel watcher's output was unreadable"}};
    CHECK(kernel_lines(receipt) ==
          "From the kernel\n  Resources             unreadable: the kernel watcher's output was unreadable\n");
}

TEST_CASE("Values from a newer daemon are named in the exit code, the box line and a closing section")
{
    Receipt receipt = normal_run();
    receipt.observed.termination = {TerminationMechanism::unrecognized, 3, std::nullopt, false, 0.07};
    receipt.cleanup.status = CleanupStatus::unrecognized;
    receipt.unrecognized = {{"observed.termination.mechanism", "QUEUE_EXPIRED"}, {"cleanup.status", "HANDED\x1b"}};
    const auto view = render_short_receipt(receipt);
    CHECK(view.find("  Exit code             3 (ended as \"QUEUE_EXPIRED\", which this pybox does not know; "
                    "the engine reported exit code 3)\n") != std::string::npos);
    CHECK(view.find("  Box                   \"HANDED?\", which this pybox does not know\n") != std::string::npos);
    CHECK(view.ends_with("Not understood  values from a newer pyboxd; --json shows the whole receipt\n"
                         "  cleanup.status        HANDED?\n"
                         "  observed.termination.mechanism  QUEUE_EXPIRED\n"));
}

TEST_CASE("A run on another engine of a pool names it; a run on the local engine does not")
{
    auto receipt = normal_run();
    receipt.engine = EngineRef{"local", "unix:///r/engine/docker.sock"};
    CHECK(render_short_receipt(receipt).find("Engine") == std::string::npos);
    receipt.engine = EngineRef{"engine2", "unix:///e2/docker.sock"};
    CHECK_THAT(render_short_receipt(receipt),
               Catch::Contains("  Network               none\n  Engine                engine2 (unix:///e2/docker.sock)\n"));
}

TEST_CASE("A receipt pyboxd did not keep gets a Kept line that says so, why, and that the answer is its only copy")
{
    const auto text = pybox::client::render_not_kept(
        "pyboxd signed the receipt of run 5319e024 but could not keep it: Cannot write /r/x.tmp: Read-only file system.\x1b");
    CHECK(text == "Kept\n"
                  "  Receipt               NOT KEPT — pyboxd signed the receipt of run 5319e024 but could not keep it: "
                  "Cannot write /r/x.tmp: Read-only file system.? `pybox receipts show` cannot show it: this answer "
                  "holds its only copy.\n");
}

TEST_CASE("The Environment line names what the program's environment held beyond PyBox's, only where it was observed")
{
    auto receipt = normal_run();
    CHECK(render_short_receipt(receipt).find("Environment") == std::string::npos);
    receipt.observed.environment = EnvironmentRecord{"the box's first process", {}};
    CHECK_THAT(render_short_receipt(receipt), Catch::Contains("  Network               none\n"
                                                              "  Environment           only what PyBox set\n"));
    receipt.observed.environment->beyond_spec = {"HOSTNAME=pybox-5319e024", "KUBERNETES_PORT=tcp://10.0.0.1:443",
                                                 "X\x1b=1"};
    CHECK_THAT(render_short_receipt(receipt),
               Catch::Contains("  Environment           also HOSTNAME, KUBERNETES_PORT, X? (not set by PyBox)\n"));
    receipt.observed.environment->beyond_spec.clear();
    for (char letter = 'A'; letter <= 'L'; ++letter) receipt.observed.environment->beyond_spec.push_back(std::string(1, letter) + "=v");
    CHECK_THAT(render_short_receipt(receipt),
               Catch::Contains("  Environment           also A, B, C, D, E, F, G, H, I, J and 2 more (not set by PyBox)\n"));
}
