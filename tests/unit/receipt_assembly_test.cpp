// assemble_receipt(): the receipt of each outcome a sealed run can have, from a description and
// the evidence its phases would have left, with no engine and no clock.
#include "daemon/run/receipt_assembly.hpp"

#include "common/sha256.hpp"
#include "common/version.hpp"
#include "daemon/engine/docker_facts.hpp"
#include "tests/support/box_states.hpp"
#include "tests/support/receipt_checks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

using namespace pybox;
using daemon::BoxKind;
using daemon::Problem;
using daemon::RunDescription;
using daemon::RunEvidence;
using proto::CleanupStatus;
using proto::KillAnswer;
using proto::TerminationMechanism;
using test::has_code;
using test::k_finished_ns;
using test::phase_outcome;
namespace json = boost::json;

namespace {

constexpr std::int64_t k_expires_at = 1'900'000'000;

// `seconds` after an arbitrary start on the monotonic clock.
MonoClock::time_point at(double seconds)
{
    const std::chrono::duration<double> since(seconds);
    return MonoClock::time_point{} + std::chrono::duration_cast<MonoClock::duration>(since);
}

// The output `out` and `err`, kept up to `limit` bytes each.
daemon::OutputCapture output(const std::string& out, const std::string& err = {}, std::size_t limit = 65'536)
{
    daemon::OutputCapture capture(limit);
    if (!out.empty()) capture.add({proto::OutputStream::stdout_stream, out});
    if (!err.empty()) capture.add({proto::OutputStream::stderr_stream, err});
    capture.finish();
    return capture;
}

RunDescription described(BoxKind kind = BoxKind::cold)
{
    RunDescription description;
    description.kind = kind;
    description.request.source = "print(6*7)\n";
    description.request.timeout_s = 2.0;
    description.policy = *proto::policy_for_image("stdlib");
    description.image = {"sha256:" + std::string(64, 'a'), std::string(64, 'b')};
    description.box.installation_id = std::string(32, 'c');
    description.box.run_id = std::string(32, 'd');
    description.box.expires_at = k_expires_at;
    description.created_at = "2026-11-29T20:00:04.900000Z";
    description.engine = proto::EngineRef{"local", "unix:///run/pybox/engine.sock"};
    description.command = kind == BoxKind::warm ? proto::warm_box_command() : proto::box_command(2.0);
    return description;
}

daemon::PhaseRecord phase(std::string name, double from, double to, std::string outcome = "ok")
{
    return daemon::PhaseRecord{std::move(name), at(from), at(to), std::move(outcome)};
}

// A box that was made, started, ran its program to `exit_code`, and is gone.
RunEvidence completed(int exit_code = 0)
{
    RunEvidence evidence;
    evidence.made = at(0);
    evidence.began = at(0);
    evidence.phases = {phase("create", 0.0, 0.05), phase("verify", 0.05, 0.06), phase("start", 0.06, 0.1),
                       phase("run", 0.1, 0.3),     phase("inspect", 0.3, 0.31), phase("remove", 0.31, 0.4)};
    evidence.ended = at(0.45);
    evidence.box_started = at(0.1);
    evidence.box_started_wall = WallClock::time_point{} + std::chrono::seconds(1'800'000'000);
    evidence.program_started = at(0.1);
    evidence.container_id = "box1";
    evidence.effective_policy = json::object{{"mismatches", json::array{}}};
    evidence.policy_verified = true;
    evidence.exit_observed = true;
    evidence.final_state = test::exited_state(exit_code);
    evidence.engine_clock_offset = proto::ClockOffset{-20'000, 20'000};
    evidence.output = output("42\n");
    evidence.stream_ended = true;
    evidence.environment = engine::EnvironmentReport{daemon::box_environment(), ""};
    evidence.watch.resources = json::object{{"status", "MEASURED"}};
    // The kernel's record: the interpreter exited at 0.28 s, the box's first process after it.
    const auto status = static_cast<std::uint32_t>(exit_code) << 8;
    evidence.watch.process_ends = watcher::FollowedEnds{watcher::ProcExit{100, status, monotonic_ns(at(0.29))}, 101,
                                                        watcher::ProcExit{101, status, monotonic_ns(at(0.28))}};
    evidence.removal = daemon::RemovalOutcome{true, 1, std::nullopt, false};
    return evidence;
}

// A box that was never created: the create failed with `code`.
RunEvidence not_created(std::string code = "engine_error")
{
    RunEvidence evidence;
    evidence.made = at(0);
    evidence.began = at(0);
    evidence.phases = {phase("create", 0.0, 0.05, "failed"), phase("remove", 0.05, 0.05, "skipped")};
    evidence.ended = at(0.06);
    evidence.problems.push_back(Problem{Problem::Kind::create_failed, make_error(std::move(code), "refused")});
    return evidence;
}

// A box killed at the deadline: the kill sent 1 ms before the engine's FinishedAt.
RunEvidence killed_at_deadline(KillAnswer answer = KillAnswer::accepted)
{
    RunEvidence evidence = completed(137);
    evidence.kill = answer;
    evidence.kill_sent_unix_ns = k_finished_ns - 1'000'000;
    // Sent at 0.27 s; the kernel recorded both processes killed by SIGKILL after it.
    evidence.kill_sent_mono = at(0.27);
    constexpr std::uint32_t k_sigkill = 9;
    evidence.watch.process_ends->first->wait_status = k_sigkill;
    evidence.watch.process_ends->program->wait_status = k_sigkill;
    evidence.phases[3].outcome = "timeout";
    evidence.timeouts = {"deadline"};
    return evidence;
}

proto::Receipt assembled(const RunDescription& description, const RunEvidence& evidence)
{
    return daemon::assemble_receipt(description, evidence).receipt;
}

std::vector<std::string> codes_of(const proto::Receipt& receipt)
{
    std::vector<std::string> codes;
    for (const auto& explanation : receipt.explanations) codes.push_back(explanation.code);
    return codes;
}

// The first explanation with `code`; the test stops when there is none.
const proto::Explanation& explanation(const proto::Receipt& receipt, std::string_view code)
{
    const auto found = std::find_if(receipt.explanations.begin(), receipt.explanations.end(),
                                    [&](const proto::Explanation& each) { return each.code == code; });
    REQUIRE(found != receipt.explanations.end());
    return *found;
}

}  // namespace

TEST_CASE("A completed run's receipt carries its identity, configuration, engine facts and timings")
{
    const auto description = described();
    const auto receipt = assembled(description, completed());
    CHECK(receipt.sealed());
    CHECK(receipt.identity.run_id == description.box.run_id);
    CHECK(receipt.identity.installation_id == description.box.installation_id);
    CHECK(receipt.identity.image == "stdlib");
    CHECK(receipt.identity.image_id == description.image.image_id);
    CHECK(receipt.identity.recipe_sha256 == description.image.recipe_sha256);
    CHECK(receipt.identity.created_at == description.created_at);
    CHECK(receipt.identity.expires_at == k_expires_at);
    CHECK(receipt.identity.daemon_version == pybox::version());
    CHECK(receipt.engine == description.engine);
    CHECK(receipt.container_id == "box1");
    CHECK(receipt.source_sha256 == sha256_hex("print(6*7)\n"));
    CHECK(receipt.source_bytes == 11);
    CHECK(receipt.configured.wall_timeout_s == 2.0);
    CHECK(receipt.configured.guest_timer_s == 3.0);
    CHECK(receipt.configured.output_limit_bytes == 65'536);
    CHECK(receipt.configured.command == proto::box_command(2.0));
    CHECK(receipt.configured.policy == description.policy);
    CHECK_FALSE(receipt.configured.files_helper_sha256);
    CHECK(receipt.observed.policy_verified_before_start);
    CHECK(receipt.observed.effective_policy.at("mismatches").as_array().empty());
    CHECK(receipt.observed.engine_state.at("ExitCode") == 0);
    CHECK(receipt.observed.resources.at("status") == "MEASURED");
    CHECK(receipt.clock_domains.engine_offset == proto::ClockOffset{-20'000, 20'000});
    CHECK(receipt.unknown.empty());
    CHECK(receipt.lifecycle.box_started_at == rfc3339_utc(*completed().box_started_wall));
    CHECK(receipt.lifecycle.last_phase == "remove");
    CHECK(receipt.lifecycle.phases.size() == 6);
    CHECK(receipt.lifecycle.phases[3].name == "run");
    CHECK(receipt.lifecycle.phases[3].started_s == Approx(0.1));
    CHECK(receipt.lifecycle.phases[3].duration_s == Approx(0.2));
    CHECK(receipt.lifecycle.total_s == Approx(0.45));
    CHECK(receipt.lifecycle.timeouts.empty());
    CHECK_FALSE(receipt.lifecycle.warm);
    CHECK_FALSE(receipt.lifecycle.preparation);
    CHECK(receipt.cleanup.reconciliation.is_null());
}

TEST_CASE("A box's report of the program's environment lists in observed.environment what PyBox did not set, or set "
          "otherwise")
{
    RunEvidence evidence = completed();
    auto variables = daemon::box_environment();
    variables.insert(variables.begin(), "A=1");
    variables.push_back("KUBERNETES_SERVICE_HOST=10.96.0.1");
    variables.push_back("PWD=/tmp");
    variables[1] = variables[1] + "x";  // a variable PyBox set, with another value
    evidence.environment = engine::EnvironmentReport{variables, ""};
    const auto receipt = assembled(described(), evidence);
    REQUIRE(receipt.observed.environment);
    CHECK(receipt.observed.environment->beyond_spec ==
          std::vector<std::string>{"A=1", variables[1], "KUBERNETES_SERVICE_HOST=10.96.0.1", "PWD=/tmp"});
    CHECK_THAT(receipt.observed.environment->source, Catch::StartsWith("the box's first process, before the program"));
    CHECK_FALSE(receipt.unknown.contains("environment"));
}

TEST_CASE("A box's report of exactly PyBox's environment gives an empty observed.environment.beyond_spec")
{
    const auto receipt = assembled(described(), completed());
    REQUIRE(receipt.observed.environment);
    CHECK(receipt.observed.environment->beyond_spec.empty());
}

TEST_CASE("A program's environment the box did not report is unknown.environment with the box's reason")
{
    RunEvidence evidence = completed();
    evidence.environment = engine::EnvironmentReport{std::nullopt, "a Docker box does not report it"};
    const auto receipt = assembled(described(), evidence);
    CHECK_FALSE(receipt.observed.environment);
    CHECK(receipt.unknown.at("environment") == "a Docker box does not report it");
    evidence.environment.reset();
    CHECK(assembled(described(), evidence).unknown.at("environment") == "the box's output was never read");
}

TEST_CASE("A program that never started has no environment to know")
{
    const auto receipt = assembled(described(), not_created());
    CHECK_FALSE(receipt.observed.environment);
    CHECK_FALSE(receipt.unknown.contains("environment"));
}

TEST_CASE("A program that exits 0 by itself is EXITED, with its output complete and its box removed")
{
    const auto receipt = assembled(described(), completed());
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.observed.termination.exit_code == 0);
    CHECK(codes_of(receipt) == std::vector<std::string>{"EXITED"});
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK(receipt.capture.output_complete);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK(receipt.cleanup.removed);
    CHECK(receipt.cleanup.attempts == 1);
    CHECK_FALSE(receipt.cleanup.error);
}

TEST_CASE("A non-zero exit is the program's own end, with its exit code")
{
    const auto receipt = assembled(described(), completed(3));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.observed.termination.exit_code == 3);
    CHECK(explanation(receipt, "EXITED").message == "The program ended by itself with exit code 3, as the kernel recorded its end.");
    CHECK(receipt.capture.output_complete);
}

TEST_CASE("A program killed at the deadline is DEADLINE_KILL, with the deadline's budget fired")
{
    const auto receipt = assembled(described(), killed_at_deadline());
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::deadline_kill);
    CHECK(receipt.observed.termination.deadline_kill_sent);
    CHECK(receipt.observed.termination.signal == 9);
    CHECK(has_code(receipt, "DEADLINE_KILL"));
    CHECK(receipt.lifecycle.timeouts == std::vector<std::string>{"deadline"});
    CHECK(phase_outcome(receipt, "run") == "timeout");
}

TEST_CASE("Exit code 137 with the engine's OOMKilled is OUT_OF_MEMORY")
{
    auto evidence = completed(137);
    evidence.final_state = test::exited_state(137, true);
    // The kernel recorded the interpreter killed by SIGKILL, its first process outliving it.
    evidence.watch.process_ends->program->wait_status = 9;
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::out_of_memory);
    CHECK(receipt.observed.termination.signal_source == proto::SignalSource::oom_kill);
    CHECK(has_code(receipt, "OUT_OF_MEMORY"));
}

TEST_CASE("An OOM kill the watcher counted while the program exited 0 is OOM_KILL_IN_BOX, and exit 0 stands")
{
    auto evidence = completed(0);
    evidence.watch.oom_kills = 1;
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.observed.termination.exit_code == 0);
    CHECK(has_code(receipt, "OOM_KILL_IN_BOX"));
}

TEST_CASE("Output over the limit is OUTPUT_TRUNCATED for that stream, and the output is not complete")
{
    auto description = described();
    description.request.output_limit_bytes = 4;
    auto evidence = completed();
    evidence.output = output("0123456789", "ok", 4);
    const auto receipt = assembled(description, evidence);
    CHECK(receipt.capture.stdout_stream.bytes == "0123");
    CHECK(receipt.capture.stdout_stream.total_bytes == 10);
    CHECK(receipt.capture.stderr_stream.bytes == "ok");
    CHECK_FALSE(receipt.capture.output_complete);
    const auto& truncated = explanation(receipt, "OUTPUT_TRUNCATED");
    CHECK(truncated.evidence.at("stream") == "stdout");
    CHECK(truncated.evidence.at("bytes_dropped") == 6);
    CHECK(truncated.evidence.at("output_limit_bytes") == 4);
    CHECK(codes_of(receipt) == std::vector<std::string>{"EXITED", "OUTPUT_TRUNCATED"});
}

TEST_CASE("A broken output stream is STREAM_ERROR, and the output is not complete")
{
    auto evidence = completed();
    evidence.stream_ended = false;
    evidence.stream_error = "the output stream broke: reset";
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.capture.stream_error == "the output stream broke: reset");
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK(explanation(receipt, "STREAM_ERROR").message == "the output stream broke: reset");
}

TEST_CASE("An output stream that broke its own format is STREAM_ERROR saying so, before any other break")
{
    auto evidence = completed();
    evidence.stream_error = "the output stream broke: reset";
    evidence.output_malformed = "engine stream: ended inside a frame";
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.capture.stream_error == "malformed output stream: engine stream: ended inside a frame");
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK(explanation(receipt, "STREAM_ERROR").message == *receipt.capture.stream_error);
}

TEST_CASE("A failed create is CREATE_FAILED and NOT_STARTED, with nothing to remove")
{
    const auto receipt = assembled(described(), not_created());
    CHECK(codes_of(receipt) == std::vector<std::string>{"CREATE_FAILED"});
    CHECK(explanation(receipt, "CREATE_FAILED").evidence ==
          json::object{{"code", "engine_error"}, {"message", "refused"}});
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(receipt.cleanup.status == CleanupStatus::not_created);
    CHECK(receipt.cleanup.attempts == 0);
    CHECK(receipt.container_id.empty());
    CHECK(receipt.lifecycle.last_phase == "remove");
    CHECK(phase_outcome(receipt, "create") == "failed");
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK_FALSE(receipt.capture.stream_error);
    CHECK(receipt.unknown.at("absolute_clock_alignment") ==
          "the program never started, so the engine's clock was not read");
}

TEST_CASE("Create warnings are CREATE_WARNINGS listing them, after a stale attempt note, in the order met")
{
    auto evidence = not_created();
    evidence.problems = {Problem{Problem::Kind::attempt_note_stale, make_error("io_error", "disk full")},
                         Problem{Problem::Kind::create_warnings, {}, {"swap limit ignored", "kernel too old"}}};
    evidence.container_id = "box1";
    evidence.removal = daemon::RemovalOutcome{true, 1, std::nullopt, false};
    const auto receipt = assembled(described(), evidence);
    CHECK(codes_of(receipt) == std::vector<std::string>{"ATTEMPT_NOTE_STALE", "CREATE_WARNINGS"});
    CHECK(explanation(receipt, "ATTEMPT_NOTE_STALE").evidence.at("message") == "disk full");
    CHECK(explanation(receipt, "CREATE_WARNINGS").evidence.at("warnings") ==
          json::array{"swap limit ignored", "kernel too old"});
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("Settings that cannot be read back are VERIFY_FAILED; settings that differ are POLICY_MISMATCH, naming "
          "the fields")
{
    auto unread = not_created();
    unread.problems = {Problem{Problem::Kind::verify_failed, make_error("engine_timeout", "slow")}};
    CHECK(explanation(assembled(described(), unread), "VERIFY_FAILED").message ==
          "The box's settings could not be read back, so it was not started.");

    auto mismatched = not_created();
    mismatched.problems = {Problem{Problem::Kind::policy_mismatch, {}, {"HostConfig.Memory"}}};
    mismatched.effective_policy = json::object{{"mismatches", json::array{"HostConfig.Memory"}}};
    const auto receipt = assembled(described(), mismatched);
    CHECK(explanation(receipt, "POLICY_MISMATCH").evidence.at("fields") == json::array{"HostConfig.Memory"});
    CHECK(receipt.observed.effective_policy.at("mismatches") == json::array{"HostConfig.Memory"});
    CHECK_FALSE(receipt.observed.policy_verified_before_start);
}

TEST_CASE("A failed attach, wait registration or start each has its code, and the program never started")
{
    const std::vector<std::pair<Problem::Kind, std::string>> cases{
        {Problem::Kind::attach_failed, "ATTACH_FAILED"},
        {Problem::Kind::wait_not_registered, "WAIT_FAILED"},
        {Problem::Kind::start_failed, "START_FAILED"}};
    for (const auto& [kind, code] : cases) {
        auto evidence = not_created();
        evidence.problems = {Problem{kind, make_error("engine_error", "no")}};
        const auto receipt = assembled(described(), evidence);
        CHECK(codes_of(receipt) == std::vector<std::string>{code});
        CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    }
    auto evidence = not_created();
    evidence.problems = {Problem{Problem::Kind::wait_not_registered, make_error("engine_error", "no")}};
    CHECK(explanation(assembled(described(), evidence), "WAIT_FAILED").message ==
          "PyBox could not register for the box's exit; it was not started.");
}

TEST_CASE("A wait that ended without the exit is WAIT_FAILED, saying what ended it")
{
    const std::vector<std::pair<std::string, std::string>> cases{
        {"engine_timeout", "The engine did not report the box's exit in time."},
        {"engine_protocol", "The connection waiting for the box's exit broke or carried a malformed answer before "
                            "the engine reported the exit."},
        {"cancelled", "PyBox stopped waiting for the box's exit."},
        {"engine_error", "The engine answered the wait with an error instead of the box's exit."}};
    for (const auto& [code, sentence] : cases) {
        auto evidence = completed();
        evidence.exit_observed = false;
        evidence.problems = {Problem{Problem::Kind::wait_failed, make_error(code, "x")}};
        const auto receipt = assembled(described(), evidence);
        CHECK(explanation(receipt, "WAIT_FAILED").message == sentence);
        CHECK_FALSE(receipt.capture.output_complete);
    }
}

TEST_CASE("A kill that failed is KILL_FAILED, before the end's own explanations, and the cause is not established")
{
    auto evidence = killed_at_deadline(KillAnswer::failed);
    evidence.problems = {Problem{Problem::Kind::kill_failed, make_error("engine_timeout", "slow")}};
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(codes_of(receipt).front() == "KILL_FAILED");
    CHECK(has_code(receipt, "CAUSE_NOT_ESTABLISHED"));
    CHECK(receipt.unknown.count("exact_termination_cause") == 1);
}

TEST_CASE("An engine gone mid-run is ENGINE_GONE with what failed as evidence, and the end ENGINE_LOST")
{
    auto evidence = completed();
    evidence.exit_observed = false;
    evidence.final_state.reset();
    const auto wait_error = make_error("engine_protocol", "connection reset");
    evidence.problems = {Problem{Problem::Kind::wait_failed, wait_error}};
    evidence.engine_gone = daemon::EngineGone{make_error("engine_unreachable", "refused"),
                                              make_error("engine_unreachable", "refused again"), wait_error};
    evidence.removal = daemon::RemovalOutcome{false, 2, "engine_unreachable", false};
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
    CHECK(receipt.observed.engine_state.is_null());
    CHECK(codes_of(receipt) ==
          std::vector<std::string>{"WAIT_FAILED", "REMOVAL_UNCONFIRMED", "ENGINE_STATE_UNREAD", "ENGINE_GONE"});
    const auto& gone = explanation(receipt, "ENGINE_GONE").evidence;
    CHECK(gone.at("final_inspect").at("message") == "refused");
    CHECK(gone.at("ping").at("message") == "refused again");
    CHECK(gone.at("wait").at("code") == "engine_protocol");
    CHECK_THAT(explanation(receipt, "ENGINE_GONE").message, Catch::Contains("the deadline + 1 s"));
    CHECK_FALSE(receipt.capture.output_complete);
}

TEST_CASE("The assembled run says the engine was lost exactly when its end is ENGINE_LOST")
{
    CHECK_FALSE(daemon::assemble_receipt(described(), completed()).engine_lost);
    auto unread = completed();
    unread.exit_observed = false;
    unread.final_state.reset();
    const auto lost = daemon::assemble_receipt(described(), unread);
    CHECK(lost.engine_lost);
    CHECK(lost.receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
    auto still_running = completed();
    still_running.final_state->running = true;
    const auto running = daemon::assemble_receipt(described(), still_running);
    CHECK(running.engine_lost);
    CHECK(running.receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
    auto never_started = completed();
    never_started.program_started.reset();
    never_started.final_state.reset();
    CHECK_FALSE(daemon::assemble_receipt(described(), never_started).engine_lost);
}

TEST_CASE("The sweep's summary in the evidence is the receipt's cleanup.reconciliation")
{
    auto evidence = completed();
    evidence.reconciliation = json::object{{"boxes_removed", 1}};
    CHECK(assembled(described(), evidence).cleanup.reconciliation == evidence.reconciliation);
}

TEST_CASE("A removal not confirmed is REMOVAL_UNCONFIRMED with the expiry and the last error")
{
    auto evidence = completed();
    evidence.removal = daemon::RemovalOutcome{false, 2, "engine_timeout: slow", true};
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.cleanup.status == CleanupStatus::removal_unconfirmed);
    CHECK_FALSE(receipt.cleanup.removed);
    CHECK(receipt.cleanup.attempts == 2);
    CHECK(receipt.cleanup.error == "engine_timeout: slow");
    CHECK(codes_of(receipt) == std::vector<std::string>{"REMOVAL_UNCONFIRMED", "EXITED"});
    const auto& unconfirmed = explanation(receipt, "REMOVAL_UNCONFIRMED").evidence;
    CHECK(unconfirmed.at("expires_at") == k_expires_at);
    CHECK(unconfirmed.at("error") == "engine_timeout: slow");
}

TEST_CASE("An attempt note that outlived its box is the cleanup's error, whether or not a box was made")
{
    auto removed = completed();
    removed.removal = daemon::RemovalOutcome{true, 2, "the first delete failed", false};
    removed.note_not_removed = "the note could not be removed";
    const auto after_removal = assembled(described(), removed);
    CHECK(after_removal.cleanup.status == CleanupStatus::removed);
    CHECK(after_removal.cleanup.error == "the note could not be removed");

    auto never_made = not_created();
    never_made.note_not_removed = "the note could not be removed";
    CHECK(assembled(described(), never_made).cleanup.error == "the note could not be removed");
    CHECK_FALSE(assembled(described(), not_created()).cleanup.error);
}

TEST_CASE("With the watcher off, its reason and unknowns go into the receipt as it left them")
{
    auto evidence = completed();
    evidence.watch.resources = json::object{{"status", "UNKNOWN"}, {"reason", "the watcher is off"}};
    evidence.watch.unknown = {{"resources", "the watcher is off"}};
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.observed.resources.at("status") == "UNKNOWN");
    CHECK(receipt.unknown.at("resources") == "the watcher is off");
}

TEST_CASE("An engine clock that could not be read leaves absolute_clock_alignment unknown with the reason")
{
    auto evidence = completed();
    evidence.engine_clock_offset.reset();
    evidence.clock_read_failed = "GET /info failed: timeout";
    const auto receipt = assembled(described(), evidence);
    CHECK_FALSE(receipt.clock_domains.engine_offset);
    CHECK(receipt.unknown.at("absolute_clock_alignment") == "GET /info failed: timeout");
}

TEST_CASE("A client gone mid-run is CLIENT_DISCONNECTED and cancelled, and its kill STOPPED_ON_DISCONNECT")
{
    auto evidence = killed_at_deadline();
    evidence.cancelled = true;
    evidence.timeouts.clear();
    evidence.phases[3].outcome = "ok";
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.lifecycle.cancelled);
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::stopped_on_disconnect);
    CHECK(codes_of(receipt) == std::vector<std::string>{"STOPPED_ON_DISCONNECT", "CLIENT_DISCONNECTED"});
}

TEST_CASE("A cold run's wait in the queue is queued_s, and its phases and total count from its turn")
{
    auto evidence = completed();
    evidence.arrived = at(-0.5);
    const auto receipt = assembled(described(), evidence);
    CHECK(receipt.lifecycle.queued_s == Approx(0.5));
    CHECK(receipt.lifecycle.phases.front().started_s == Approx(0.0));
    CHECK(receipt.lifecycle.total_s == Approx(0.45));
}

TEST_CASE("A warm run keeps its box's making as the preparation, and its own phases count from the request")
{
    // Made at 0, started at 0.1, taken by a request that arrived at 1.9 and began at 2.0.
    RunEvidence evidence = completed();
    evidence.preparation = {phase("create", 0.0, 0.05), phase("verify", 0.05, 0.06), phase("start", 0.06, 0.1)};
    evidence.arrived = at(1.9);
    evidence.began = at(2.0);
    evidence.program_started = at(2.0);
    evidence.phases = {phase("run", 2.0, 2.1), phase("inspect", 2.1, 2.11), phase("remove", 2.11, 2.2)};
    evidence.ended = at(2.25);
    const auto receipt = assembled(described(BoxKind::warm), evidence);
    CHECK(receipt.lifecycle.warm);
    CHECK(receipt.configured.command == proto::warm_box_command());
    REQUIRE(receipt.lifecycle.preparation);
    const auto& preparation = *receipt.lifecycle.preparation;
    REQUIRE(preparation.phases.size() == 3);
    CHECK(preparation.phases[2].name == "start");
    CHECK(preparation.phases[2].started_s == Approx(0.06));
    CHECK(preparation.total_s == Approx(0.1));
    CHECK(preparation.waited_s == Approx(1.9));
    CHECK(receipt.lifecycle.queued_s == Approx(0.1));
    CHECK(receipt.lifecycle.phases.front().name == "run");
    CHECK(receipt.lifecycle.phases.front().started_s == Approx(0.0));
    CHECK(receipt.lifecycle.total_s == Approx(0.25));
    CHECK(receipt.lifecycle.last_phase == "remove");
    // The box timer started at delivery, not at the box's start: the end is still the program's.
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
}

TEST_CASE("Budgets that fired are listed in the order they fired")
{
    auto evidence = killed_at_deadline();
    const std::vector<std::string> fired{"wait", "deadline", "remove"};
    evidence.timeouts = fired;
    CHECK(assembled(described(), evidence).lifecycle.timeouts == fired);
}

TEST_CASE("A files run whose helper never reported is FILES_NOT_RETURNED, saying the deadline killed it")
{
    auto description = described();
    description.request.files = proto::RunRequest::Files{};
    description.files_helper_sha256 = std::string(64, 'e');
    auto evidence = killed_at_deadline();
    evidence.output = daemon::OutputCapture(65'536);
    evidence.output.split_stdout_at("--marker--", 1024);
    evidence.output.add({proto::OutputStream::stdout_stream, "partial output"});
    evidence.output.finish();
    const auto answer = daemon::assemble_receipt(description, evidence);
    CHECK(answer.outputs.empty());
    CHECK(answer.receipt.configured.files_helper_sha256 == std::string(64, 'e'));
    REQUIRE(answer.receipt.files);
    REQUIRE_FALSE(answer.receipt.files->errors.empty());
    CHECK(answer.receipt.files->errors.front() ==
          "The box was killed at the deadline before the files helper reported; no output file was kept.");
    CHECK(has_code(answer.receipt, "FILES_NOT_RETURNED"));
    CHECK(answer.receipt.capture.stdout_stream.bytes == "partial output");
}

TEST_CASE("A run that moved no files has no files record and returns no files")
{
    const auto answer = daemon::assemble_receipt(described(), completed());
    CHECK_FALSE(answer.receipt.files);
    CHECK(answer.outputs.empty());
}
