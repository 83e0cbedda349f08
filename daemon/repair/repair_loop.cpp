#include "daemon/repair/repair_loop.hpp"

#include "common/sha256.hpp"
#include "daemon/repair/code_block.hpp"
#include "daemon/repair/repair_prompt.hpp"

#include <chrono>
#include <string>
#include <utility>
#include <variant>

namespace pybox::repair {

namespace net = boost::asio;
using proto::StepOutcome;
using proto::StopReason;

namespace {

proto::ModelCall model_call_of(const model::ModelAnswer& answer)
{
    return proto::ModelCall{answer.model,
                            answer.prompt_tokens,
                            answer.completion_tokens,
                            std::chrono::duration<double>(answer.latency).count(),
                            answer.tries,
                            answer.finish_reason};
}

proto::StepError step_error(const Error& error)
{
    return proto::StepError{error.code, error.message};
}

// The index of the earlier program `program` repeats, if any.
std::optional<std::size_t> repeated(const std::vector<std::string>& earlier, const std::string& program)
{
    for (std::size_t i = 0; i < earlier.size(); ++i)
        if (same_program(earlier[i], program)) return i;
    return std::nullopt;
}

// Runs `source` as step.step and fills the step; true when the run succeeded.
net::awaitable<bool> run_step(proto::RepairStep& step, const proto::RunRequest& base, std::string source,
                              const RepairActions& actions)
{
    proto::RunRequest request = base;
    request.source = std::move(source);
    auto answer = co_await actions.run(std::move(request));
    if (!answer) {
        step.outcome = StepOutcome::run_refused;
        step.detail = "The daemon did not run the program.";
        step.error = step_error(answer.error());
        co_return false;
    }
    const bool succeeded = run_succeeded(answer->receipt);
    step.outcome = succeeded ? StepOutcome::succeeded : StepOutcome::failed;
    step.detail = how_it_ended(answer->receipt);
    step.receipt = std::move(answer->receipt);
    co_return succeeded;
}

}  // namespace

net::awaitable<proto::RepairRecord> run_repair(proto::RepairRequest request, RepairActions actions)
{
    proto::RepairRecord record;
    record.rounds_allowed = request.rounds;
    record.original_sha256 = sha256_hex(request.run.source);

    proto::RepairStep original;
    original.step = 0;
    original.program_sha256 = record.original_sha256;
    const bool original_succeeded = co_await run_step(original, request.run, request.run.source, actions);
    record.steps.push_back(original);
    if (original_succeeded) {
        record.stop_reason = StopReason::original_succeeded;
        record.final_step = 0;
        co_return record;
    }
    if (original.outcome == StepOutcome::run_refused) {
        record.stop_reason = StopReason::run_refused;
        co_return record;
    }
    RepairConversation conversation(request.run.image, request.run.timeout_s);
    conversation.add_failure(request.run.source, *original.receipt);
    std::vector<std::string> programs{request.run.source};

    for (int round = 1; round <= request.rounds; ++round) {
        if (auto stop = actions.stopped()) {
            record.stop_reason = *stop;
            co_return record;
        }
        proto::RepairStep step;
        step.step = round;
        auto answer = co_await actions.ask(conversation.messages());
        if (!answer) {
            step.outcome = StepOutcome::model_failed;
            step.detail = "The call to the model failed.";
            step.error = step_error(answer.error());
            record.steps.push_back(std::move(step));
            record.stop_reason = actions.stopped().value_or(StopReason::model_failed);
            co_return record;
        }
        step.model_call = model_call_of(*answer);
        auto read = program_from_answer(answer->content);
        if (auto* none = std::get_if<NoProgram>(&read)) {
            step.outcome = StepOutcome::no_usable_block;
            step.detail = none->why;
            record.steps.push_back(std::move(step));
            record.stop_reason = StopReason::no_usable_block;
            co_return record;
        }
        std::string program = std::get<std::string>(std::move(read));
        step.program_sha256 = sha256_hex(program);
        step.program = program;
        if (auto earlier = repeated(programs, program)) {
            step.outcome = StepOutcome::repeated_program;
            step.detail = "The model answered the program of step " + std::to_string(*earlier) + " again.";
            record.steps.push_back(std::move(step));
            record.stop_reason = StopReason::repeated_program;
            co_return record;
        }
        if (auto stop = actions.stopped()) {
            step.outcome = StepOutcome::not_run;
            step.detail = "The repair ended before this program ran.";
            record.steps.push_back(std::move(step));
            record.stop_reason = *stop;
            co_return record;
        }
        const bool succeeded = co_await run_step(step, request.run, program, actions);
        record.steps.push_back(step);
        if (succeeded) {
            record.stop_reason = StopReason::fixed;
            record.final_step = round;
            co_return record;
        }
        if (step.outcome == StepOutcome::run_refused) {
            record.stop_reason = StopReason::run_refused;
            co_return record;
        }
        conversation.add_model_program(program);
        conversation.add_failure(program, *step.receipt);
        programs.push_back(std::move(program));
    }
    record.stop_reason = actions.stopped().value_or(StopReason::rounds_used);
    co_return record;
}

}  // namespace pybox::repair
