// The run lifecycle (SealedRunService, BoxRun) against the BoxEngine interface's fake: each
// phase and each explanation code run/ emits, with faults injected by method, and no engine
// notation or HTTP bytes anywhere. (sealed_run_test.cpp drives the same lifecycle through the
// Docker engine's HTTP answers.)
#include "daemon/run/sealed_run.hpp"

#include "daemon/kube/kube_engine_probe.hpp"

#include "tests/support/fake_box_engine.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/receipt_checks.hpp"
#include "tests/support/temp_runtime.hpp"
#include "tests/support/valid_request.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace pybox;
using namespace std::chrono_literals;
using proto::CleanupStatus;
using proto::KillAnswer;
using proto::TerminationMechanism;
using test::FakeBoxEngine;
using test::has_code;
using test::phase_outcome;
namespace json = boost::json;
namespace net = boost::asio;

namespace {

constexpr const char* k_installation = "0123456789abcdef0123456789abcdef";

struct Fixture {
    test::TempRuntime runtime;
    net::io_context io;
    FakeBoxEngine engine{io};
    std::optional<daemon::SealedRunService> service;

    Fixture()
    {
        daemon::ImageVerifier verify = [](std::string) -> net::awaitable<Expected<daemon::VerifiedImage>> {
            co_return daemon::VerifiedImage{"sha256:" + std::string(64, 'a'), std::string(64, 'b')};
        };
        service.emplace(io.get_executor(), engine, engine, std::move(verify),
                        daemon::AttemptTracking{daemon::AttemptLog(runtime.paths)}, k_installation,
                        daemon::ReconciliationSummary{}, daemon::WatchSetup{});
    }

    proto::Receipt run(proto::RunRequest request, net::cancellation_slot slot = {},
                       daemon::RunObserver* observer = nullptr)
    {
        auto answer = test::run_to_result(io, service->run(test::valid_request(std::move(request)), 0, slot, observer));
        REQUIRE(answer.has_value());
        return std::move(answer->receipt);
    }
};

proto::RunRequest request(double timeout_s = 2.0)
{
    proto::RunRequest run;
    run.source = "print(6*7)\n";
    run.timeout_s = timeout_s;
    return run;
}

// The box never ran (no start was asked for, unless `start_asked`), and is gone.
void check_not_started_and_removed(const Fixture& f, const proto::Receipt& receipt, bool start_asked = false)
{
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(f.engine.count("start") == (start_asked ? 1 : 0));
    CHECK_FALSE(f.engine.box_exists());
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

// What a streamed run's observer is told, in order.
struct ToldRun final : daemon::RunObserver {
    std::vector<std::string> started_runs;
    std::string out;
    std::string err;
    void started(const std::string& run_id) override { started_runs.push_back(run_id); }
    void output(proto::OutputStream stream, std::string_view bytes) override
    {
        (stream == proto::OutputStream::stdout_stream ? out : err) += bytes;
    }
};

}  // namespace

TEST_CASE("Through the box engine, an observer is told the start and exactly the output bytes the receipt keeps")
{
    Fixture f;
    f.engine.program.out = std::string(100, 'o');
    f.engine.program.err = "\xff err";
    auto run = request();
    run.output_limit_bytes = 40;
    ToldRun told;
    const auto receipt = f.run(run, {}, &told);
    REQUIRE(told.started_runs == std::vector<std::string>{receipt.identity.run_id});
    CHECK(told.out == receipt.capture.stdout_stream.bytes);
    CHECK(told.out == std::string(40, 'o'));  // the output limit holds for what is told too
    CHECK(receipt.capture.stdout_stream.total_bytes == 100);
    CHECK(told.err == "\xff err");
    CHECK(told.err == receipt.capture.stderr_stream.bytes);
}

TEST_CASE("Through the box engine, a program that exits by itself passes every phase")
{
    Fixture f;
    f.engine.program.out = "42\n";
    const auto receipt = f.run(request());
    for (const char* phase : {"create", "verify", "start", "run", "inspect", "remove"})
        CHECK(phase_outcome(receipt, phase) == "ok");
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.observed.termination.exit_code == 0);
    CHECK(has_code(receipt, "EXITED"));
    CHECK(receipt.observed.policy_verified_before_start);
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK(receipt.engine->address == "fake://box-engine");
    // The receipt keeps the engine's own records as they came.
    CHECK(receipt.observed.effective_policy.at("checked_by") == "fake");
    CHECK(receipt.observed.engine_state.at("status") == "exited");
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK_FALSE(f.engine.box_exists());
    CHECK(f.engine.stdin_received() == "print(6*7)\n");
}

TEST_CASE("Through the box engine, the receipt names the engine's clocks as its probe does")
{
    Fixture f;
    const auto domains = proto::receipt_to_json(f.run(request())).at("clock_domains");
    CHECK(domains.at("observed.engine_state").as_string() == f.engine.clock_names().engine_state);
    CHECK(domains.at("observed.termination.engine_lifetime_s").as_string() == f.engine.clock_names().engine_lifetime);
}

TEST_CASE("A cluster's probe names its clocks as the cluster's, to the second, with no offset measured")
{
    const kube::KubeEngineProbe probe([] { return Expected<kube::KubeClient*>(make_error("config_invalid", "none")); });
    CHECK(probe.clock_names().engine_state.find("to the second") != std::string::npos);
    CHECK(probe.clock_names().engine_state.find("not measured") != std::string::npos);
    CHECK(probe.clock_names().engine_lifetime.find("to the second") != std::string::npos);
}

TEST_CASE("Through the box engine, the box is made from the policy, the labels and the fixed command")
{
    Fixture f;
    const auto receipt = f.run(request());
    const auto& spec = f.engine.spec();
    CHECK(spec.name == "pybox-" + receipt.identity.run_id);
    CHECK(spec.image_id == receipt.identity.image_id);
    CHECK(spec.command == receipt.configured.command);
    CHECK(spec.policy.memory_bytes == proto::policy_for_image("stdlib")->memory_bytes);
    const engine::ListedBox as_listed{"x", spec.labels};
    CHECK(as_listed.label(daemon::k_label_owner) == k_installation);
    CHECK(as_listed.label(daemon::k_label_run) == receipt.identity.run_id);
    CHECK(as_listed.label(daemon::k_label_expires) == std::to_string(receipt.identity.expires_at));
}

TEST_CASE("Through the box engine, a failed create is CREATE_FAILED and nothing is left")
{
    Fixture f;
    f.engine.fail("create", "engine_error");
    const auto receipt = f.run(request());
    CHECK(phase_outcome(receipt, "create") == "failed");
    CHECK(has_code(receipt, "CREATE_FAILED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(receipt.cleanup.status == CleanupStatus::not_created);
}

TEST_CASE("Through the box engine, a create that timed out looks for the box by its run label and removes it")
{
    Fixture f;
    f.engine.fail("create", "engine_timeout");
    const auto receipt = f.run(request());
    CHECK(phase_outcome(receipt, "create") == "timeout");
    CHECK(f.engine.count("list") == 1);
    CHECK(has_code(receipt, "CREATE_FAILED"));
}

TEST_CASE("Through the box engine, create warnings are CREATE_WARNINGS and the box never starts")
{
    Fixture f;
    f.engine.create_warnings = {"memory limit ignored"};
    const auto receipt = f.run(request());
    CHECK(has_code(receipt, "CREATE_WARNINGS"));
    check_not_started_and_removed(f, receipt);
}

TEST_CASE("Through the box engine, settings that cannot be read back are VERIFY_FAILED")
{
    Fixture f;
    f.engine.fail("inspect", "engine_error");
    const auto receipt = f.run(request());
    CHECK(phase_outcome(receipt, "verify") == "failed");
    CHECK(has_code(receipt, "VERIFY_FAILED"));
    check_not_started_and_removed(f, receipt);
}

TEST_CASE("Through the box engine, a mismatched setting is POLICY_MISMATCH naming the engine's field")
{
    Fixture f;
    f.engine.mismatches = {{"memory", "128", "0"}};
    const auto receipt = f.run(request());
    REQUIRE(has_code(receipt, "POLICY_MISMATCH"));
    const auto& explanation = *std::find_if(receipt.explanations.begin(), receipt.explanations.end(),
                                            [](const auto& e) { return e.code == "POLICY_MISMATCH"; });
    CHECK(explanation.evidence.at("fields") == json::array{"memory"});
    CHECK_FALSE(receipt.observed.policy_verified_before_start);
    CHECK(receipt.observed.effective_policy.at("mismatches") == 1);
    check_not_started_and_removed(f, receipt);
}

TEST_CASE("Through the box engine, a setting the ended box reports differently is POLICY_MISMATCH_AFTER_RUN")
{
    Fixture f;
    f.engine.program.out = "42\n";
    f.engine.mismatches_once_ended = {{"status.containerStatuses[box].imageID", "registry/pybox/stdlib@sha256:a",
                                       "docker-pullable://registry/pybox/stdlib@sha256:b"}};
    const auto receipt = f.run(request());
    REQUIRE(has_code(receipt, "POLICY_MISMATCH_AFTER_RUN"));
    const auto& explanation = *std::find_if(receipt.explanations.begin(), receipt.explanations.end(),
                                            [](const auto& e) { return e.code == "POLICY_MISMATCH_AFTER_RUN"; });
    CHECK(explanation.evidence.at("fields") == json::array{"status.containerStatuses[box].imageID"});
    // Verified before the start, and the record is the ended box's check.
    CHECK(receipt.observed.policy_verified_before_start);
    CHECK(receipt.observed.effective_policy.at("ended") == true);
    CHECK(receipt.observed.effective_policy.at("mismatches") == 1);
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK_FALSE(f.engine.box_exists());
}

TEST_CASE("Through the box engine, the ended box's check is the receipt's effective policy")
{
    Fixture f;
    const auto receipt = f.run(request());
    CHECK_FALSE(has_code(receipt, "POLICY_MISMATCH_AFTER_RUN"));
    CHECK(receipt.observed.effective_policy.at("ended") == true);
    CHECK(receipt.observed.effective_policy.at("mismatches") == 0);
}

TEST_CASE("Through the box engine, a failed attach is ATTACH_FAILED and the box never starts")
{
    Fixture f;
    f.engine.fail("attach", "engine_unreachable");
    const auto receipt = f.run(request());
    CHECK(phase_outcome(receipt, "start") == "failed");
    CHECK(has_code(receipt, "ATTACH_FAILED"));
    check_not_started_and_removed(f, receipt);
}

TEST_CASE("Through the box engine, a wait that cannot be registered is WAIT_FAILED before start")
{
    Fixture f;
    f.engine.fail("wait", "engine_error");
    const auto receipt = f.run(request());
    CHECK(has_code(receipt, "WAIT_FAILED"));
    check_not_started_and_removed(f, receipt);
}

TEST_CASE("Through the box engine, a start the engine refuses is START_FAILED")
{
    Fixture f;
    f.engine.fail("start", "engine_error");
    const auto receipt = f.run(request());
    CHECK(phase_outcome(receipt, "start") == "failed");
    CHECK(has_code(receipt, "START_FAILED"));
    check_not_started_and_removed(f, receipt, true);
}

// The phases of a run, as "name:outcome", in order.
std::vector<std::string> phases_of(const proto::Receipt& receipt)
{
    std::vector<std::string> phases;
    for (const auto& phase : receipt.lifecycle.phases) phases.push_back(phase.name + ":" + phase.outcome);
    return phases;
}

const proto::Explanation* explanation(const proto::Receipt& receipt, std::string_view code)
{
    for (const auto& found : receipt.explanations)
        if (found.code == code) return &found;
    return nullptr;
}

TEST_CASE("Through the box engine, a box the engine asks to make again is removed, made once more and runs: BOX_REMADE")
{
    Fixture f;
    f.engine.program.out = "42\n";
    f.engine.fail("remake", "engine_error");
    const auto receipt = f.run(request());
    CHECK(phases_of(receipt) == std::vector<std::string>{"create:ok", "verify:ok", "start:failed", "remove:ok",
                                                         "create:ok", "verify:ok", "start:ok", "run:ok", "inspect:ok",
                                                         "remove:ok"});
    CHECK(f.engine.count("create") == 2);
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK(receipt.observed.policy_verified_before_start);
    const auto* remade = explanation(receipt, "BOX_REMADE");
    REQUIRE(remade != nullptr);
    CHECK(remade->evidence.at("first_container_id") == FakeBoxEngine::k_box_id);
    CHECK(remade->evidence.at("start_failure").at("message") == "injected engine_error on remake");
    CHECK_FALSE(has_code(receipt, "START_FAILED"));
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK_FALSE(f.engine.box_exists());
}

TEST_CASE("Through the box engine, a box is made again only once: a second such failure is START_FAILED")
{
    Fixture f;
    f.engine.fail("remake", "engine_error", 2);
    const auto receipt = f.run(request());
    CHECK(f.engine.count("create") == 2);
    CHECK(has_code(receipt, "BOX_REMADE"));
    CHECK(has_code(receipt, "START_FAILED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK_FALSE(f.engine.box_exists());
}

TEST_CASE("Through the box engine, a box to make again whose removal is not confirmed is not made again")
{
    Fixture f;
    f.engine.fail("remake", "engine_error");
    f.engine.fail("remove", "engine_error", 2);
    const auto receipt = f.run(request());
    CHECK(f.engine.count("create") == 1);
    CHECK_FALSE(has_code(receipt, "BOX_REMADE"));
    CHECK(has_code(receipt, "START_FAILED"));
    // The cleanup removes it (its third delete succeeds).
    check_not_started_and_removed(f, receipt, true);
}

TEST_CASE("Through the box engine, what the box's settings leave unknown is in the receipt's unknown")
{
    Fixture f;
    f.engine.settings_unknown = {{"seccomp_profile", "the runtime's default"}};
    const auto receipt = f.run(request());
    CHECK(receipt.unknown.at("seccomp_profile") == "the runtime's default");
}

TEST_CASE("Through the box engine, what the engine observed of an unwatched box's resources is the receipt's")
{
    Fixture f;
    const json::object observed{{"status", "COLLECTED"}, {"source", "the engine's own samples"}};
    f.engine.observed_resources = ResourceObservation{observed, {{"final_resource_counters", "only samples"}}};
    const auto receipt = f.run(request());
    CHECK(receipt.observed.resources == observed);
    CHECK(receipt.unknown.at("final_resource_counters") == "only samples");
    CHECK_FALSE(receipt.unknown.contains("resources"));
}

TEST_CASE("Through the box engine, an unwatched box whose engine observed nothing has resources UNKNOWN, saying why")
{
    Fixture f;
    const auto receipt = f.run(request());
    CHECK(receipt.observed.resources.at("status") == "UNKNOWN");
    CHECK(receipt.observed.resources.at("reason").as_string() == daemon::k_watcher_off_in_config);
    CHECK(receipt.unknown.at("resources") == daemon::k_watcher_off_in_config);
}

TEST_CASE("Through the box engine, a program still running at the deadline is killed: DEADLINE_KILL")
{
    Fixture f;
    f.engine.program.until_killed = true;
    const auto receipt = f.run(request(0.2));
    CHECK(f.engine.count("kill") == 1);
    CHECK(phase_outcome(receipt, "run") == "timeout");
    CHECK(receipt.observed.termination.deadline_kill_sent);
    CHECK(receipt.observed.termination.deadline_kill_answer == KillAnswer::accepted);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("Through the box engine, a kill the engine fails is KILL_FAILED and the program's own end stands")
{
    Fixture f;
    f.engine.program.runs_for = 400ms;
    f.engine.program.exit_code = 3;
    f.engine.fail("kill", "engine_error");
    const auto receipt = f.run(request(0.1));
    CHECK(has_code(receipt, "KILL_FAILED"));
    CHECK(receipt.observed.termination.deadline_kill_answer == KillAnswer::failed);
    CHECK(receipt.observed.termination.exit_code == 3);
}

TEST_CASE("Through the box engine, a wait that breaks is WAIT_FAILED and the end is read from the final inspect")
{
    Fixture f;
    f.engine.fail("wait_result", "engine_protocol");
    const auto receipt = f.run(request());
    CHECK(has_code(receipt, "WAIT_FAILED"));
    CHECK(phase_outcome(receipt, "run") == "failed");
    CHECK(receipt.observed.termination.exit_code == 0);
}

TEST_CASE("Through the box engine, an unreadable final state is ENGINE_STATE_UNREAD")
{
    Fixture f;
    f.engine.fail("inspect", "engine_error", 1, 1);  // the verify passes, the final inspect fails
    const auto receipt = f.run(request());
    CHECK(phase_outcome(receipt, "inspect") == "failed");
    CHECK(has_code(receipt, "ENGINE_STATE_UNREAD"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
}

TEST_CASE("Through the box engine, an engine gone mid-run is ENGINE_GONE, with the removal unconfirmed")
{
    Fixture f;
    f.engine.fail("wait_result", "engine_protocol");
    f.engine.fail("inspect", "engine_unreachable", 100, 1);
    f.engine.fail("ping", "engine_unreachable", 100, 1);
    const auto receipt = f.run(request());
    CHECK(has_code(receipt, "ENGINE_GONE"));
    CHECK(has_code(receipt, "REMOVAL_UNCONFIRMED"));
    CHECK(receipt.cleanup.status == CleanupStatus::removal_unconfirmed);
}

TEST_CASE("Through the box engine, a removal that keeps failing is REMOVAL_UNCONFIRMED after two attempts")
{
    Fixture f;
    f.engine.fail("remove", "engine_error", 2);
    const auto receipt = f.run(request());
    CHECK(has_code(receipt, "REMOVAL_UNCONFIRMED"));
    CHECK(receipt.cleanup.attempts == 2);
    CHECK(phase_outcome(receipt, "remove") == "failed");
    CHECK(f.engine.box_exists());
}

TEST_CASE("Through the box engine, a client that goes away is CLIENT_DISCONNECTED and the box is removed")
{
    Fixture f;
    f.engine.program.until_killed = true;
    net::cancellation_signal disconnect;
    net::steady_timer later(f.io, 50ms);
    later.async_wait([&](boost::system::error_code) { disconnect.emit(net::cancellation_type::terminal); });
    const auto receipt = f.run(request(5.0), disconnect.slot());
    CHECK(has_code(receipt, "CLIENT_DISCONNECTED"));
    CHECK(receipt.lifecycle.cancelled);
    // Without the kernel's record (none in a unit test) the engine's 137 cannot tell the kill's
    // end from the program's own.
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK_FALSE(f.engine.box_exists());
}

TEST_CASE("Through the box engine, an output stream left open after the exit is STREAM_ERROR")
{
    Fixture f;
    f.engine.program.stream_stays_open = true;
    const auto receipt = f.run(request());
    CHECK(has_code(receipt, "STREAM_ERROR"));
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("Through the box engine, output past the limit is OUTPUT_TRUNCATED, each stream on its own")
{
    Fixture f;
    f.engine.program.out = std::string(100, 'o');
    f.engine.program.err = "e";
    auto run = request();
    run.output_limit_bytes = 10;
    const auto receipt = f.run(run);
    CHECK(has_code(receipt, "OUTPUT_TRUNCATED"));
    CHECK(receipt.capture.stdout_stream.bytes == std::string(10, 'o'));
    CHECK(receipt.capture.stderr_stream.bytes == "e");
}

TEST_CASE("Through the box engine, exit code 137 with an OOM kill reported is OUT_OF_MEMORY")
{
    Fixture f;
    f.engine.program.exit_code = 137;
    f.engine.program.oom_killed = true;
    const auto receipt = f.run(request());
    CHECK(has_code(receipt, "OUT_OF_MEMORY"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::out_of_memory);
}

TEST_CASE("Through the box engine, a files run whose helper never reports is FILES_NOT_RETURNED")
{
    Fixture f;
    auto run = request();
    run.files = proto::RunRequest::Files{{}, true};
    const auto receipt = f.run(run);
    REQUIRE(receipt.files.has_value());
    CHECK(has_code(receipt, "FILES_NOT_RETURNED"));
}
