// The repair loop against a fake runner and a fake model: every way it can stop, what the model
// is told, and what the record keeps.
#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "daemon/repair/repair_loop.hpp"
#include "daemon/repair/repair_prompt.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/valid_request.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace net = boost::asio;
using pybox::Expected;
using pybox::make_error;
using pybox::model::ModelAnswer;
using pybox::model::ModelMessage;
using pybox::proto::RepairRecord;
using pybox::proto::RepairRequest;
using pybox::proto::StepOutcome;
using pybox::proto::StopReason;
using pybox::proto::TerminationMechanism;

namespace {

// A fake daemon: programs whose text contains "fine" exit 0, "slow" are killed at the deadline,
// anything else exits 1 with a traceback naming the program's first line on stderr. With
// `not_kept`, every answer says its receipt was not kept.
struct FakeRuns {
    std::vector<std::string> programs;
    bool refuse = false;
    std::optional<std::string> not_kept;

    net::awaitable<Expected<pybox::proto::RunAnswer>> run(pybox::proto::ValidRunRequest valid)
    {
        const pybox::proto::RunRequest& request = valid.request();
        programs.push_back(request.source);
        if (refuse) co_return make_error("busy", "The run queue is full.");
        pybox::proto::RunAnswer answer;
        answer.receipt = pybox::test::sample_receipt();
        answer.receipt_not_kept = not_kept;
        answer.receipt.configured.wall_timeout_s = request.timeout_s;
        auto& termination = answer.receipt.observed.termination;
        if (request.source.find("fine") != std::string::npos) {
            termination.exit_code = 0;
        } else if (request.source.find("slow") != std::string::npos) {
            termination.mechanism = TerminationMechanism::deadline_kill;
            termination.exit_code = 137;
        } else {
            termination.exit_code = 1;
            const std::string first_line = request.source.substr(0, request.source.find('\n'));
            answer.receipt.capture.stderr_stream = {"Traceback (most recent call last):\nNameError: " + first_line + "\n", 0};
            answer.receipt.capture.stderr_stream.total_bytes = answer.receipt.capture.stderr_stream.bytes.size();
        }
        co_return answer;
    }
};

// A fake model answering from a script; it keeps every conversation it was sent.
struct FakeModel {
    std::deque<Expected<std::string>> answers;
    std::vector<std::vector<ModelMessage>> asked;

    net::awaitable<Expected<ModelAnswer>> ask(std::vector<ModelMessage> messages)
    {
        asked.push_back(std::move(messages));
        REQUIRE_FALSE(answers.empty());
        auto next = std::move(answers.front());
        answers.pop_front();
        if (!next) co_return next.error();
        ModelAnswer answer;
        answer.content = *next;
        answer.model = "test/model";
        answer.prompt_tokens = 100;
        answer.completion_tokens = 20;
        answer.latency = std::chrono::milliseconds(250);
        answer.tries = 1;
        answer.finish_reason = "stop";
        co_return answer;
    }
};

std::string fenced(const std::string& program)
{
    return "Here you go:\n```python\n" + program + "\n```\n";
}

struct Harness {
    FakeRuns runs;
    FakeModel model;
    std::optional<StopReason> stop_after_model;  // what stopped() says once the model was asked
    int rounds = pybox::limits::k_default_repair_rounds;

    RepairRecord repair(const std::string& source)
    {
        net::io_context io;
        const RepairRequest request{pybox::test::valid_request(source), rounds};
        pybox::repair::RepairActions actions;
        actions.run = [this](pybox::proto::ValidRunRequest run) { return runs.run(std::move(run)); };
        actions.ask = [this](std::vector<ModelMessage> messages) { return model.ask(std::move(messages)); };
        actions.stopped = [this]() -> std::optional<StopReason> {
            return model.asked.empty() ? std::nullopt : stop_after_model;
        };
        std::optional<RepairRecord> record;
        net::co_spawn(io, pybox::repair::run_repair(request, actions), [&](std::exception_ptr error, RepairRecord r) {
            if (error) std::rethrow_exception(error);
            record = std::move(r);
        });
        io.run();
        REQUIRE(record.has_value());
        return *record;
    }
};

}  // namespace

TEST_CASE("A program fixed on round 2: every step is recorded, the model sees each failure")
{
    Harness h;
    h.model.answers = {fenced("still_crash()"), fenced("print('fine')")};
    const auto record = h.repair("crash()\n");

    CHECK(record.stop_reason == StopReason::fixed);
    REQUIRE(record.final_step == 2);
    REQUIRE(record.steps.size() == 3);
    CHECK(record.original_sha256 == pybox::sha256_hex("crash()\n"));
    CHECK(record.steps[0].outcome == StepOutcome::failed);
    CHECK_FALSE(record.steps[0].program.has_value());  // the client has the original
    CHECK(record.steps[1].outcome == StepOutcome::failed);
    CHECK(record.steps[1].program == "still_crash()\n");
    CHECK(record.steps[2].outcome == StepOutcome::succeeded);
    CHECK(record.steps[2].program_sha256 == pybox::sha256_hex("print('fine')\n"));
    REQUIRE(record.steps[2].model_call.has_value());
    CHECK(record.steps[2].model_call->model == "test/model");
    CHECK(record.steps[2].model_call->completion_tokens == 20);
    CHECK(record.steps[2].model_call->latency_s == Approx(0.25));
    CHECK(record.steps[2].receipt.has_value());
    CHECK(h.runs.programs == std::vector<std::string>{"crash()\n", "still_crash()\n", "print('fine')\n"});

    // Round 1: the system message, then the original and its failure.
    REQUIRE(h.model.asked.size() == 2);
    const auto& first = h.model.asked[0];
    REQUIRE(first.size() == 2);
    CHECK(first[0].role == "system");
    CHECK_THAT(first[0].content, Catch::Contains("exactly one fenced code block"));
    CHECK(first[1].role == "user");
    CHECK_THAT(first[1].content, Catch::Contains("```python\ncrash()\n```") && Catch::Contains("It exited with code 1.") &&
                                     Catch::Contains("NameError: crash()"));
    // Round 2: its own program as its turn, then that program's failure.
    const auto& second = h.model.asked[1];
    REQUIRE(second.size() == 4);
    CHECK(second[2].role == "assistant");
    CHECK(second[2].content == "```python\nstill_crash()\n```\n");
    CHECK_THAT(second[3].content, Catch::Contains("Your program failed too") && Catch::Contains("NameError: still_crash()"));
}

TEST_CASE("A program that succeeds as it is never reaches the model")
{
    Harness h;
    const auto record = h.repair("print('fine')\n");
    CHECK(record.stop_reason == StopReason::original_succeeded);
    CHECK(record.final_step == 0);
    CHECK(record.steps.size() == 1);
    CHECK(h.model.asked.empty());
}

TEST_CASE("A step whose receipt the daemon did not keep says so and why, and its record reads back with it")
{
    Harness h;
    h.runs.not_kept = "pyboxd signed the receipt of run 1 but could not keep it: full.";
    const auto record = h.repair("print('fine')\n");
    REQUIRE(record.steps.size() == 1);
    CHECK(record.steps[0].receipt_not_kept == h.runs.not_kept);
    const auto written = pybox::proto::to_json(record);
    CHECK(written.at("steps").at(0).at("receipt_not_kept").as_string() == *h.runs.not_kept);
    CHECK(pybox::proto::repair_record_from_json(written, pybox::util::ReadMode::strict)->steps == record.steps);
    h.runs.not_kept.reset();
    CHECK_FALSE(pybox::proto::to_json(h.repair("print('fine')\n")).at("steps").at(0).as_object().contains("receipt_not_kept"));
}

TEST_CASE("A new broken program every round stops when the rounds are used")
{
    Harness h;
    h.rounds = 3;
    h.model.answers = {fenced("a()"), fenced("b()"), fenced("c()")};
    const auto record = h.repair("crash()\n");
    CHECK(record.stop_reason == StopReason::rounds_used);
    CHECK_FALSE(record.final_step.has_value());
    CHECK(record.steps.size() == 4);
    CHECK(h.runs.programs.size() == 4);
    CHECK(h.model.asked.size() == 3);
}

TEST_CASE("The same broken program again stops the repair without running it")
{
    Harness h;
    h.model.answers = {fenced("a()"), fenced("a()  ")};
    const auto record = h.repair("crash()\n");
    CHECK(record.stop_reason == StopReason::repeated_program);
    REQUIRE(record.steps.size() == 3);
    CHECK(record.steps[2].outcome == StepOutcome::repeated_program);
    CHECK(record.steps[2].detail == "The model answered the program of step 1 again.");
    CHECK_FALSE(record.steps[2].receipt.has_value());
    CHECK(h.runs.programs.size() == 2);

    Harness original;
    original.model.answers = {fenced("crash()")};
    CHECK(original.repair("crash()\n").stop_reason == StopReason::repeated_program);
}

TEST_CASE("An answer with no block, or two, stops the repair and says why")
{
    Harness none;
    none.model.answers = {Expected<std::string>("Just call fixed() instead.")};
    auto record = none.repair("crash()\n");
    CHECK(record.stop_reason == StopReason::no_usable_block);
    REQUIRE(record.steps.size() == 2);
    CHECK(record.steps[1].outcome == StepOutcome::no_usable_block);
    CHECK(record.steps[1].detail == "The answer has no fenced code block.");
    CHECK(record.steps[1].model_call.has_value());  // the tokens were spent all the same
    CHECK(record.steps[1].program_sha256.empty());

    Harness two;
    two.model.answers = {fenced("a()") + fenced("b()")};
    record = two.repair("crash()\n");
    CHECK(record.stop_reason == StopReason::no_usable_block);
    CHECK(record.steps[1].detail == "The answer has 2 fenced code blocks; exactly one was asked for.");
    CHECK(two.runs.programs.size() == 1);
}

TEST_CASE("A failed model call stops the repair with its error")
{
    Harness h;
    h.model.answers = {Expected<std::string>(make_error("model_auth", "The model service refused the key (401)."))};
    const auto record = h.repair("crash()\n");
    CHECK(record.stop_reason == StopReason::model_failed);
    REQUIRE(record.steps.size() == 2);
    CHECK(record.steps[1].outcome == StepOutcome::model_failed);
    REQUIRE(record.steps[1].error.has_value());
    CHECK(record.steps[1].error->code == "model_auth");
}

TEST_CASE("A run the daemon refuses stops the repair; a refused original is not sent to the model")
{
    Harness h;
    h.runs.refuse = true;
    const auto record = h.repair("crash()\n");
    CHECK(record.stop_reason == StopReason::run_refused);
    REQUIRE(record.steps.size() == 1);
    CHECK(record.steps[0].error->code == "busy");
    CHECK(h.model.asked.empty());
}

TEST_CASE("A repair told to stop (budget, client gone) keeps the model's program unrun and says why")
{
    Harness h;
    h.stop_after_model = StopReason::budget_exhausted;
    h.model.answers = {fenced("print('fine')")};
    const auto record = h.repair("crash()\n");
    CHECK(record.stop_reason == StopReason::budget_exhausted);
    REQUIRE(record.steps.size() == 2);
    CHECK(record.steps[1].outcome == StepOutcome::not_run);
    CHECK(record.steps[1].program == "print('fine')\n");
    CHECK(h.runs.programs.size() == 1);
}

TEST_CASE("How a run ended, in the words the model reads")
{
    auto receipt = pybox::test::sample_receipt();
    receipt.configured.wall_timeout_s = 2;
    receipt.observed.termination.exit_code = 3;
    CHECK(pybox::repair::how_it_ended(receipt) == "It exited with code 3.");
    CHECK_FALSE(pybox::repair::run_succeeded(receipt));
    receipt.observed.termination.exit_code = 0;
    CHECK(pybox::repair::run_succeeded(receipt));
    receipt.observed.termination.mechanism = TerminationMechanism::deadline_kill;
    CHECK_FALSE(pybox::repair::run_succeeded(receipt));
    CHECK(pybox::repair::how_it_ended(receipt) == "It was killed at its deadline of 2 s: it ran too long.");
    receipt.observed.termination.mechanism = TerminationMechanism::out_of_memory;
    CHECK_THAT(pybox::repair::how_it_ended(receipt), Catch::StartsWith("It was killed for running out of memory (the limit is "));
}

TEST_CASE("The model sees only the end of a long stderr, as UTF-8, and the conversation stays bounded")
{
    auto receipt = pybox::test::sample_receipt();
    receipt.observed.termination.exit_code = 1;
    const std::string head(10'000, 'h');
    receipt.capture.stderr_stream = {head + "\xff" + "Error: the end\n", 0};
    receipt.capture.stderr_stream.total_bytes = 20'000;
    pybox::repair::RepairConversation conversation("stdlib", 2);
    conversation.add_failure("crash()\n", receipt);
    const auto& text = conversation.messages().back().content;
    CHECK_THAT(text, Catch::Contains("(the last 4096 of 20000 bytes)") && Catch::Contains("\xEF\xBF\xBD" "Error: the end"));
    CHECK(text.find(std::string(4'200, 'h')) == std::string::npos);

    const std::string big(60'000, '#');
    for (int round = 0; round < 8; ++round) {
        conversation.add_model_program(big);
        conversation.add_failure(big, receipt);
    }
    std::size_t total = 0;
    for (const auto& message : conversation.messages()) total += message.content.size();
    CHECK(total <= pybox::repair::k_conversation_bytes);
    CHECK(conversation.messages()[1].content.find("crash()") != std::string::npos);  // the original stays
    CHECK(conversation.messages().back().role == "user");
}
