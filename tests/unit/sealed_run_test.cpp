// The run lifecycle (SealedRunService) against the scripted fake engine: one test per
// explanation code the lifecycle emits and per termination mechanism, checked on the receipt.
#include "daemon/run/sealed_run.hpp"

#include "common/clock.hpp"
#include "common/limits.hpp"
#include "daemon/engine/docker_engine_probe.hpp"
#include "tests/support/engine_frames.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/receipt_checks.hpp"
#include "tests/support/temp_runtime.hpp"
#include "tests/support/valid_request.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace pybox;
using namespace std::chrono_literals;
using proto::CleanupStatus;
using proto::KillAnswer;
using proto::TerminationMechanism;
using test::Deliver;
using test::FakeEngine;
using test::has_code;
using test::phase_outcome;
using test::Reply;
using test::StreamEnd;
namespace json = boost::json;
namespace net = boost::asio;

namespace {

constexpr const char* k_installation = "0123456789abcdef0123456789abcdef";
constexpr const char* k_box = "box1";

struct RunFixture {
    test::TempRuntime runtime;
    net::io_context io;
    FakeEngine* engine = nullptr;
    std::optional<engine::EngineClient> client;
    std::optional<engine::DockerBoxEngine> boxes;
    std::optional<engine::DockerEngineProbe> probe;
    std::optional<daemon::SealedRunService> service;
};

// The one place the service is built: the engine is the fake, the image check always passes,
// the kernel watcher is off; `warm_boxes` warm boxes (none unless asked).
void make_service(RunFixture& f, int warm_boxes = 0)
{
    auto fake = std::make_unique<FakeEngine>(f.io);
    f.engine = fake.get();
    f.client.emplace(f.io.get_executor(), std::move(fake));
    f.boxes.emplace(*f.client, "runc");
    f.probe.emplace(*f.client);
    daemon::ImageVerifier verify = [](std::string) -> net::awaitable<Expected<daemon::VerifiedImage>> {
        co_return daemon::VerifiedImage{"sha256:" + std::string(64, 'a'), std::string(64, 'b')};
    };
    f.service.emplace(f.io.get_executor(), *f.boxes, *f.probe, std::move(verify),
                      daemon::AttemptTracking{daemon::AttemptLog(f.runtime.paths)}, k_installation, daemon::ReconciliationSummary{},
                      daemon::WatchSetup{}, daemon::RunQueueOptions{}, daemon::WarmSetup{warm_boxes});
}

// What the engine reports for the box the last create asked for (Docker 20.10's shapes).
std::string inspected_as_created(const FakeEngine& engine)
{
    json::object spec;
    for (const auto& request : engine.received())
        if (request.method == "POST" && request.target.find("/containers/create") != std::string::npos)
            spec = json::parse(request.body).as_object();
    json::object host = spec.at("HostConfig").as_object();
    host["Binds"] = nullptr;
    host["PidMode"] = "";
    host["UTSMode"] = "";
    host["UsernsMode"] = "";
    host["CgroupnsMode"] = "";
    const json::object config{{"User", spec.at("User")}, {"Tty", false}, {"Labels", spec.at("Labels")},
                              {"Image", spec.at("Image")}};
    return json::serialize(json::object{{"Id", k_box}, {"HostConfig", host}, {"Config", config}});
}

// The final inspect: FinishedAt is the engine's clock (here the daemon's) when it is asked, plus
// `finished_later`.
std::string final_state(std::int64_t exit_code, bool oom_killed = false, bool running = false,
                        std::chrono::milliseconds finished_later = {})
{
    const auto now = WallClock::now() + finished_later;
    const json::object state{{"Status", running ? "running" : "exited"},
                             {"Running", running},
                             {"ExitCode", exit_code},
                             {"OOMKilled", oom_killed},
                             {"StartedAt", rfc3339_utc(now - 100ms)},
                             {"FinishedAt", running ? "0001-01-01T00:00:00Z" : rfc3339_utc(now)}};
    return json::serialize(json::object{{"Id", k_box}, {"State", state}});
}

Reply inspect_final(std::int64_t exit_code, bool oom_killed = false, bool running = false)
{
    return test::respond_with([=] { return final_state(exit_code, oom_killed, running); });
}

Reply inspect_verify(const FakeEngine& engine)
{
    return test::respond_with([&engine] { return inspected_as_created(engine); });
}

// A started box read back: the settings it was created with, and running.
Reply inspect_running(const FakeEngine& engine)
{
    return test::respond_with([&engine] {
        auto box = json::parse(inspected_as_created(engine)).as_object();
        box["State"] = json::object{{"Status", "running"}, {"Running", true}, {"Pid", 4242}};
        return json::serialize(box);
    });
}

Reply gone() { return test::respond("404 Not Found", R"({"message":"No such container: box1"})"); }
Reply failure() { return test::respond("500 Internal Server Error", R"({"message":"boom"})"); }

// How the scripted box behaves; each test changes what it needs before script().
struct Script {
    std::vector<Reply> create;
    std::vector<Reply> inspect;  // verify, final, after removal
    Reply attach = test::attach_stream(test::frame(1, "42\n"));
    Reply wait = test::wait_answer(0);
    Reply start = test::respond("204 No Content").exits_box_after(20ms);  // the program ends by itself
    Reply kill = test::respond("204 No Content").exits_box_after(0ms);
    std::vector<Reply> remove{test::respond("204 No Content")};
    Reply info = test::respond_with([] {
        return json::serialize(json::object{{"SystemTime", rfc3339_utc(WallClock::now())}});
    });
};

Script healthy(const FakeEngine& engine, std::int64_t exit_code = 0)
{
    Script script;
    script.create = {test::respond("201 Created", R"({"Id":"box1","Warnings":null})")};
    script.inspect = {inspect_verify(engine), inspect_final(exit_code), gone()};
    script.wait = test::wait_answer(exit_code);
    return script;
}

// A program that runs until it is killed: the box exits when the kill arrives, with 137. Its
// FinishedAt is a second after the final inspect is asked, so that the box ends after the kill
// beyond the uncertainty of the clock offset (the round trip of /info, long on a loaded machine).
Script runs_until_killed(const FakeEngine& engine)
{
    Script script = healthy(engine, 137);
    script.start = test::respond("204 No Content");
    script.inspect[1] = test::respond_with([] { return final_state(137, false, false, 1000ms); });
    return script;
}

void script(FakeEngine& engine, const Script& box)
{
    engine.on("GET", "/_ping", {Reply{test::ping_response("1.41")}});
    engine.on("GET", "/info", {box.info});
    engine.on("POST", "/containers/create", box.create);
    engine.on("GET", "/containers/box1/json", box.inspect);
    engine.on("POST", "/containers/box1/attach", {box.attach});
    engine.on("POST", "/containers/box1/wait", {box.wait});
    engine.on("POST", "/containers/box1/start", {box.start});
    engine.on("POST", "/containers/box1/kill", {box.kill});
    engine.on("DELETE", "/containers/box1", box.remove);
}

proto::RunRequest request(double timeout_s = 2.0)
{
    proto::RunRequest run;
    run.source = "print(6*7)\n";
    run.timeout_s = timeout_s;
    return run;
}

proto::Receipt run(RunFixture& f, proto::RunRequest run_request, net::cancellation_slot slot = {})
{
    auto answer = test::run_to_result(f.io, f.service->run(test::valid_request(std::move(run_request)), 0, slot, nullptr));
    REQUIRE(answer.has_value());
    CHECK(f.engine->unscripted().empty());
    return std::move(answer->receipt);
}

}  // namespace

TEST_CASE("A Docker box sits below its run parent, named by its container id (the cgroupfs driver's layout)")
{
    RunFixture f;
    make_service(f);
    const auto parent = daemon::run_parent_path("inst", "run1");
    CHECK(f.boxes->box_cgroup(parent, "abc") == parent + "/abc");
}

TEST_CASE("A program that exits by itself gets a complete receipt with every phase ok")
{
    RunFixture f;
    make_service(f);
    script(*f.engine, healthy(*f.engine));
    const auto receipt = run(f, request());
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.observed.termination.exit_code == 0);
    CHECK_FALSE(receipt.observed.termination.deadline_kill_sent);
    CHECK(has_code(receipt, "EXITED"));
    CHECK(receipt.observed.policy_verified_before_start);
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK(receipt.capture.output_complete);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    for (const auto& phase : receipt.lifecycle.phases) CHECK(phase.outcome == "ok");
    CHECK(proto::exit_code_for(receipt) == 0);
    // The daemon's receipts are sealed runs': nothing in the daemon can mark one otherwise.
    CHECK(receipt.sealed());
    CHECK(proto::receipt_to_json(receipt).at("isolation") == "container");
}

TEST_CASE("The engine clock offset is measured during the run and replaces the unknown alignment")
{
    RunFixture f;
    make_service(f);
    script(*f.engine, healthy(*f.engine));
    const auto receipt = run(f, request());
    REQUIRE(receipt.clock_domains.engine_offset);
    CHECK(receipt.clock_domains.engine_offset->min_ns <= 0);
    CHECK(receipt.clock_domains.engine_offset->max_ns >= 0);
    CHECK_FALSE(receipt.unknown.contains("absolute_clock_alignment"));
}

TEST_CASE("A failed GET /info leaves the clock alignment unknown with the reason")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.info = failure();
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK_FALSE(receipt.clock_domains.engine_offset);
    CHECK(receipt.unknown.at("absolute_clock_alignment").starts_with("GET /info failed"));
}

TEST_CASE("CREATE_FAILED: a refused create starts nothing and leaves nothing to remove")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.create = {failure()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "CREATE_FAILED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(receipt.cleanup.status == CleanupStatus::not_created);
    CHECK(phase_outcome(receipt, "create") == "failed");
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK(proto::exit_code_for(receipt) == 125);
}

TEST_CASE("CREATE_WARNINGS: a box created with warnings is removed without starting")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.create = {test::respond("201 Created", R"({"Id":"box1","Warnings":["memory limit ignored"]})")};
    box.inspect = {gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "CREATE_WARNINGS"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK(f.engine->count("POST", "/start") == 0);
}

TEST_CASE("VERIFY_FAILED: settings that cannot be read back keep the box from starting")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.inspect = {failure(), gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "VERIFY_FAILED"));
    CHECK_FALSE(receipt.observed.policy_verified_before_start);
    CHECK(phase_outcome(receipt, "verify") == "failed");
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK(f.engine->count("POST", "/start") == 0);
}

TEST_CASE("POLICY_MISMATCH: a box whose effective memory differs is removed without starting")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    const FakeEngine& engine = *f.engine;
    box.inspect = {test::respond_with([&engine] {
                       auto inspected = json::parse(inspected_as_created(engine));
                       inspected.at("HostConfig").as_object()["Memory"] = 0;
                       return json::serialize(inspected);
                   }),
                   gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "POLICY_MISMATCH"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(f.engine->count("POST", "/start") == 0);
}

TEST_CASE("ATTACH_FAILED: without the output stream the box is not started")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.attach = failure();
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "ATTACH_FAILED"));
    CHECK(phase_outcome(receipt, "start") == "failed");
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK(f.engine->count("POST", "/start") == 0);
}

TEST_CASE("WAIT_FAILED: a wait that cannot be registered keeps the box from starting")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.wait = test::drops_connection();
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "WAIT_FAILED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(f.engine->count("POST", "/start") == 0);
}

TEST_CASE("START_FAILED: a refused start is NOT_STARTED and the box is removed")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.start = failure();
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "START_FAILED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::not_started);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("A program still running at the deadline is killed, with the kill's answer and time; on the engine's word alone its cause is not established")
{
    // No kernel record in a unit test: the engine's 137 after the kill is also what a program
    // can exit with, so the receipt does not claim the kill, nor the command 124.
    RunFixture f;
    make_service(f);
    script(*f.engine, runs_until_killed(*f.engine));
    const auto receipt = run(f, request(0.2));
    const auto& termination = receipt.observed.termination;
    CHECK(termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK_FALSE(termination.signal);
    CHECK(termination.deadline_kill_sent);
    CHECK(termination.deadline_kill_answer == KillAnswer::accepted);
    CHECK(termination.deadline_kill_sent_at.has_value());
    CHECK(has_code(receipt, "CAUSE_NOT_ESTABLISHED"));
    CHECK(receipt.unknown.contains("program_end"));
    CHECK(phase_outcome(receipt, "run") == "timeout");
    CHECK(receipt.lifecycle.timeouts == std::vector<std::string>{"deadline"});  // once, and never as "run"
    CHECK(proto::exit_code_for(receipt) == 137);
}

TEST_CASE("A deadline kill answered 409 is recorded as sent, and the program's own exit stands")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine, 0);
    box.start = test::respond("204 No Content");
    box.kill = test::respond("409 Conflict", R"({"message":"is not running"})").exits_box_after(0ms);
    script(*f.engine, box);
    const auto receipt = run(f, request(0.2));
    const auto& termination = receipt.observed.termination;
    CHECK(termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(termination.deadline_kill_sent);
    CHECK(termination.deadline_kill_answer == KillAnswer::not_running);
    CHECK(has_code(receipt, "ENDED_BEFORE_KILL_ARRIVED"));
    CHECK(proto::exit_code_for(receipt) == 0);
}

TEST_CASE("KILL_FAILED: a kill with no clear answer leaves the cause not established")
{
    RunFixture f;
    make_service(f);
    Script box = runs_until_killed(*f.engine);
    box.kill = failure().exits_box_after(0ms);
    script(*f.engine, box);
    const auto receipt = run(f, request(0.2));
    CHECK(has_code(receipt, "KILL_FAILED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(receipt.observed.termination.deadline_kill_answer == KillAnswer::failed);
    CHECK(receipt.unknown.contains("exact_termination_cause"));
}

TEST_CASE("CAUSE_NOT_ESTABLISHED: exit 137 after a kill without a measured clock offset")
{
    RunFixture f;
    make_service(f);
    Script box = runs_until_killed(*f.engine);
    box.info = failure();
    script(*f.engine, box);
    const auto receipt = run(f, request(0.2));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK(has_code(receipt, "CAUSE_NOT_ESTABLISHED"));
    CHECK(receipt.unknown.at("exact_termination_cause").find("not measured") != std::string::npos);
}

TEST_CASE("ATTEMPT_NOTE_STALE: a failed rewrite of the attempt note is reported, and the run goes on")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    // When the engine answers the create, the run's note is replaced by a folder that holds a
    // file, so the rewrite (a rename over it) fails whoever runs the test.
    const auto attempts_dir = f.runtime.paths.attempts_dir();
    box.create = {Reply{.head_from = [attempts_dir] {
        for (const auto& entry : std::filesystem::directory_iterator(attempts_dir)) {
            if (entry.path().extension() != ".json") continue;
            std::filesystem::remove(entry.path());
            std::filesystem::create_directories(entry.path() / "blocker");
        }
        return test::http_response("201 Created", R"({"Id":"box1","Warnings":null})");
    }}};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    REQUIRE(has_code(receipt, "ATTEMPT_NOTE_STALE"));
    const auto stale = std::find_if(receipt.explanations.begin(), receipt.explanations.end(),
                                    [](const auto& e) { return e.code == "ATTEMPT_NOTE_STALE"; });
    CHECK(stale->evidence.at("code") == "file_unwritable");
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("REMOVAL_UNCONFIRMED: a delete that keeps failing is retried once and flagged")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.remove = {failure()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "REMOVAL_UNCONFIRMED"));
    CHECK(receipt.cleanup.status == CleanupStatus::removal_unconfirmed);
    CHECK_FALSE(receipt.cleanup.removed);
    CHECK(receipt.cleanup.attempts == 2);
    CHECK(phase_outcome(receipt, "remove") == "failed");
}

TEST_CASE("OUTPUT_TRUNCATED: output over the limit is counted, and the output is not complete")
{
    RunFixture f;
    make_service(f);
    script(*f.engine, healthy(*f.engine));
    auto run_request = request();
    run_request.output_limit_bytes = 2;
    const auto receipt = run(f, run_request);
    CHECK(has_code(receipt, "OUTPUT_TRUNCATED"));
    CHECK(receipt.capture.stdout_stream.bytes == "42");
    CHECK(receipt.capture.stdout_stream.total_bytes == 3);
    CHECK_FALSE(receipt.capture.output_complete);
}

TEST_CASE("STREAM_ERROR: a broken output stream makes the output incomplete and the run phase failed")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.attach = test::attach_stream(test::frame(1, "42\n"), Deliver::at_exit, StreamEnd::reset);
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "STREAM_ERROR"));
    CHECK(receipt.capture.stream_error.has_value());
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK(phase_outcome(receipt, "run") == "failed");
}

TEST_CASE("CLIENT_DISCONNECTED: a client that goes away mid-run gets its box stopped and removed")
{
    RunFixture f;
    make_service(f);
    script(*f.engine, runs_until_killed(*f.engine));
    net::cancellation_signal disconnect;
    net::steady_timer later(f.io, 50ms);
    later.async_wait([&](boost::system::error_code) { disconnect.emit(net::cancellation_type::terminal); });
    const auto receipt = run(f, request(), disconnect.slot());
    CHECK(has_code(receipt, "CLIENT_DISCONNECTED"));
    CHECK(receipt.lifecycle.cancelled);
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK_FALSE(receipt.observed.termination.deadline_kill_sent);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("CLIENT_DISCONNECTED before the program runs: the box is stopped at once, not at the deadline")
{
    // The client goes away while the engine is starting the box (pybox mcp's cancellation of a
    // call that just began): the run must not wait for its 30 s deadline to kill the box. It goes
    // away as the start call reaches the engine, not after a fixed time, which a loaded machine
    // can spend before the box is even created.
    RunFixture f;
    make_service(f);
    net::cancellation_signal disconnect;
    Script box = runs_until_killed(*f.engine);
    box.start = test::respond("204 No Content").after(100ms).when_it_arrives([&] {
        net::post(f.io, [&] { disconnect.emit(net::cancellation_type::terminal); });
    });
    script(*f.engine, box);
    const auto began = std::chrono::steady_clock::now();
    const auto receipt = run(f, request(30.0), disconnect.slot());
    CHECK(std::chrono::steady_clock::now() - began < 5s);
    CHECK(has_code(receipt, "CLIENT_DISCONNECTED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::cause_not_established);
    CHECK_FALSE(receipt.observed.termination.deadline_kill_sent);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("ENGINE_STATE_UNREAD: a final inspect that fails is ENGINE_LOST with the exit code unknown")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.inspect = {inspect_verify(*f.engine), failure(), gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "ENGINE_STATE_UNREAD"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
    CHECK(receipt.unknown.contains("exit_code"));
    CHECK(phase_outcome(receipt, "inspect") == "failed");
}

TEST_CASE("EXIT_NOT_OBSERVED: a box the engine still calls running after the run is ENGINE_LOST")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.inspect = {inspect_verify(*f.engine), inspect_final(0, false, true), gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "EXIT_NOT_OBSERVED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
}

TEST_CASE("An engine lost mid-run makes the output incomplete and the run phase failed, whatever the stream did")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.wait = test::wait_answer(0);
    box.wait.stream.clear();  // the head came; at exit the engine goes away before the body
    box.inspect = {inspect_verify(*f.engine), failure(), gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "WAIT_FAILED"));
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK(phase_outcome(receipt, "run") == "failed");
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
}

TEST_CASE("ENGINE_GONE: an engine that goes away mid-run is ENGINE_LOST with the output incomplete and the box "
          "left for later")
{
    RunFixture f;
    make_service(f);
    script(*f.engine, runs_until_killed(*f.engine));
    net::steady_timer later(f.io, 50ms);
    later.async_wait([&](boost::system::error_code) { f.engine->go_away(); });
    const auto receipt = run(f, request());
    CHECK(has_code(receipt, "ENGINE_GONE"));
    CHECK(has_code(receipt, "WAIT_FAILED"));
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::engine_lost);
    CHECK_FALSE(receipt.observed.termination.deadline_kill_sent);
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK(receipt.cleanup.status == CleanupStatus::removal_unconfirmed);
    CHECK(f.engine->count("POST", "/kill") == 0);
}

TEST_CASE("A box left by a run that lost its engine is removed before the next run, once the engine answers")
{
    RunFixture f;
    make_service(f);
    // Rules before script()'s, so they match first. The first run's box runs until the engine
    // goes away; the second's ends by itself. Only the first run's verify reaches the engine before
    // it goes; then come the leftover's removal check and the second run's own inspects.
    f.engine->on("POST", "/containers/box1/start",
                 {test::respond("204 No Content"), test::respond("204 No Content").exits_box_after(20ms)});
    f.engine->on("GET", "/containers/box1/json",
                 {inspect_verify(*f.engine), gone(), inspect_verify(*f.engine), inspect_final(0), gone()});
    script(*f.engine, healthy(*f.engine));
    net::steady_timer later(f.io, 50ms);
    later.async_wait([&](boost::system::error_code) { f.engine->go_away(); });
    const auto lost = run(f, request());
    REQUIRE(lost.cleanup.status == CleanupStatus::removal_unconfirmed);
    CHECK(f.engine->count("DELETE", "/containers/box1") == 0);

    f.engine->come_back();
    const auto next = run(f, request());
    CHECK(f.engine->count("DELETE", "/containers/box1") == 2);  // the leftover, then the run's own box
    CHECK(next.cleanup.status == CleanupStatus::removed);
    CHECK(next.capture.stdout_stream.bytes == "42\n");
}

TEST_CASE("WAIT_FAILED: a wait connection dropped mid-run says the connection broke, not that time ran out")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.wait.stream.clear();  // the head came; at exit the engine closes the connection before the body
    box.inspect = {inspect_verify(*f.engine), failure(), gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    const auto wait_failed = std::find_if(receipt.explanations.begin(), receipt.explanations.end(),
                                          [](const proto::Explanation& explanation) { return explanation.code == "WAIT_FAILED"; });
    REQUIRE(wait_failed != receipt.explanations.end());
    CHECK(wait_failed->message.find("connection") != std::string::npos);
    CHECK(wait_failed->message.find("in time") == std::string::npos);
    CHECK(std::find(receipt.lifecycle.timeouts.begin(), receipt.lifecycle.timeouts.end(), "wait") ==
          receipt.lifecycle.timeouts.end());
}

TEST_CASE("OUT_OF_MEMORY: OOMKilled with exit 137 ends the run as out of memory")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine, 137);
    box.inspect = {inspect_verify(*f.engine), inspect_final(137, true), gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::out_of_memory);
    // Which process died is the kernel's to say; the engine's word alone does not.
    CHECK_FALSE(receipt.observed.termination.signal_source);
    CHECK(has_code(receipt, "OUT_OF_MEMORY"));
    CHECK(proto::exit_code_for(receipt) == 137);
}

TEST_CASE("OOM_KILL_IN_BOX: a child killed for memory while the program exits 0 leaves exit 0")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine, 0);
    box.inspect = {inspect_verify(*f.engine), inspect_final(0, true), gone()};
    script(*f.engine, box);
    const auto receipt = run(f, request());
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(has_code(receipt, "OOM_KILL_IN_BOX"));
    CHECK(proto::exit_code_for(receipt) == 0);
}

TEST_CASE("EXIT_CODE_SUGGESTS_SIGNAL: sys.exit(137) without a kill is not reported as signal 9")
{
    RunFixture f;
    make_service(f);
    script(*f.engine, healthy(*f.engine, 137));
    const auto receipt = run(f, request());
    const auto& termination = receipt.observed.termination;
    CHECK(termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK_FALSE(termination.signal);
    CHECK(termination.inferred_signal == 9);
    CHECK(has_code(receipt, "EXIT_CODE_SUGGESTS_SIGNAL"));
    CHECK(receipt.unknown.contains("signal"));
    CHECK(proto::exit_code_for(receipt) == 137);
}

TEST_CASE("A run that waits for its turn reports the wait as queued_s, and its own timings start at its turn")
{
    RunFixture f;
    make_service(f);
    Script box = healthy(*f.engine);
    box.start = test::respond("204 No Content").exits_box_after(200ms);
    box.inspect = {inspect_verify(*f.engine), inspect_final(0), gone(),
                   inspect_verify(*f.engine), inspect_final(0), gone()};
    script(*f.engine, box);

    std::optional<Expected<daemon::AssembledRun>> first, second;
    net::co_spawn(f.io, f.service->run(test::valid_request(request()), 0, {}, nullptr),
                  [&](std::exception_ptr, Expected<daemon::AssembledRun> answer) { first.emplace(std::move(answer)); });
    net::co_spawn(f.io, f.service->run(test::valid_request(request()), 0, {}, nullptr),
                  [&](std::exception_ptr, Expected<daemon::AssembledRun> answer) { second.emplace(std::move(answer)); });
    while ((!first || !second) && f.io.run_one() > 0) {
    }
    REQUIRE(first);
    REQUIRE(second);
    REQUIRE(first->has_value());
    REQUIRE(second->has_value());
    const auto& ran_first = first->value().receipt.lifecycle;
    const auto& waited = second->value().receipt.lifecycle;
    CHECK(ran_first.queued_s < 0.1);
    CHECK(waited.queued_s >= 0.15);  // the first run's box lived 200 ms
    REQUIRE_FALSE(waited.phases.empty());
    CHECK(waited.phases.front().name == "create");
    CHECK(waited.phases.front().started_s < 0.1);  // counted from its turn, not its arrival
    CHECK(second->value().receipt.cleanup.status == CleanupStatus::removed);
}

TEST_CASE("A warm box is made before the request; the run takes it and delivers the timer line, then the program")
{
    RunFixture f;
    make_service(f, 1);
    Script box = healthy(*f.engine);
    box.start = test::respond("204 No Content");  // the box waits for its program
    // Read back at delivery, running; the program then ends by itself 20 ms later.
    box.inspect = {inspect_verify(*f.engine), inspect_running(*f.engine).exits_box_after(20ms), inspect_final(0),
                   gone()};
    script(*f.engine, box);
    net::co_spawn(f.io, f.service->keep_warm(), net::detached);
    // Longer than the series gap, so the next box is made after the run, not beside it (the
    // fake engine has one box).
    f.io.run_for(limits::k_warm_series_gap + 100ms);
    REQUIRE(f.engine->count("POST", "/start") == 1);
    REQUIRE_FALSE(f.engine->box_exited());

    const auto receipt = run(f, request(2.0));
    CHECK(receipt.lifecycle.warm);
    REQUIRE(receipt.lifecycle.preparation);
    std::vector<std::string> prepared, ran;
    for (const auto& phase : receipt.lifecycle.preparation->phases) prepared.push_back(phase.name);
    for (const auto& phase : receipt.lifecycle.phases) ran.push_back(phase.name);
    CHECK(prepared == std::vector<std::string>{"create", "verify", "start"});
    CHECK(ran == std::vector<std::string>{"run", "inspect", "remove"});
    // The box waited about a second (less the time a loaded machine took to make it).
    CHECK(receipt.lifecycle.preparation->waited_s >= 0.5);
    CHECK(receipt.lifecycle.box_started_at);
    CHECK(receipt.observed.policy_verified_before_start);
    CHECK(receipt.configured.command == proto::warm_box_command());
    CHECK(receipt.configured.guest_timer_s == 3.0);
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    CHECK(receipt.observed.termination.mechanism == TerminationMechanism::target_exit_observed);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    const auto& sent = f.engine->streamed_in();
    CHECK(std::find(sent.begin(), sent.end(), "3\nprint(6*7)\n") != sent.end());
    test::run_to_end(f.io, f.service->stop_warm());
}

TEST_CASE("A warm box whose start failed and whose removal was not confirmed is removed before the next run")
{
    RunFixture f;
    make_service(f, 1);
    // Rules before script()'s, so they match first: the warm box's start fails and both of its
    // removals fail; later calls succeed (the last reply repeats).
    f.engine->on("POST", "/containers/box1/start",
                 {failure(), test::respond("204 No Content").exits_box_after(20ms)});
    f.engine->on("DELETE", "/containers/box1", {failure(), failure(), test::respond("204 No Content")});
    // The warm box's verify; the leftover gone after its removal; then the cold run's box.
    f.engine->on("GET", "/containers/box1/json",
                 {inspect_verify(*f.engine), gone(), inspect_verify(*f.engine), inspect_final(0), gone()});
    script(*f.engine, healthy(*f.engine));
    net::co_spawn(f.io, f.service->keep_warm(), net::detached);
    // Until the first attempt has ended (the keeper tries again only k_warm_retry_first later).
    for (int step = 0; step < 300 && f.engine->count("DELETE", "/containers/box1") < 2; ++step) f.io.run_for(10ms);
    REQUIRE(f.engine->count("POST", "/start") == 1);
    REQUIRE(f.engine->count("DELETE", "/containers/box1") == 2);  // tried, retried, not confirmed
    test::run_to_end(f.io, f.service->pause_warm());  // the next run goes cold, with no new warm box

    const auto receipt = run(f, request());
    CHECK_FALSE(receipt.lifecycle.warm);
    CHECK(f.engine->count("DELETE", "/containers/box1") == 4);  // the leftover first, then the run's own box
    const auto& heads = f.engine->requests();
    const auto is_create = [](const std::string& head) {
        return head.starts_with("POST") && head.find("/containers/create") != std::string::npos;
    };
    const auto first_create = std::find_if(heads.begin(), heads.end(), is_create);
    REQUIRE(first_create != heads.end());
    const auto second_create = std::find_if(first_create + 1, heads.end(), is_create);
    REQUIRE(second_create != heads.end());
    CHECK(std::count_if(heads.begin(), second_create,
                        [](const std::string& head) { return head.starts_with("DELETE"); }) == 3);
    CHECK(receipt.cleanup.status == CleanupStatus::removed);
    CHECK(receipt.capture.stdout_stream.bytes == "42\n");
    test::run_to_end(f.io, f.service->stop_warm());
}

TEST_CASE("With no warm boxes the keeper makes none and every run is cold")
{
    RunFixture f;
    make_service(f, 0);
    script(*f.engine, healthy(*f.engine));
    test::run_to_end(f.io, f.service->keep_warm());  // returns at once
    CHECK(f.engine->count("POST", "/containers/create") == 0);
    const auto receipt = run(f, request());
    CHECK_FALSE(receipt.lifecycle.warm);
    CHECK_FALSE(receipt.lifecycle.preparation);
    CHECK(receipt.configured.command == proto::box_command(2.0));
    CHECK(receipt.lifecycle.phases.front().name == "create");
}
