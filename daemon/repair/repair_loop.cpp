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

// A step whose program the daemon did not run; false, as a failed step's.
bool refused(proto::RepairStep& step, const Error& error)
{
    step.outcome = StepOutcome::run_refused;
    step.detail = "The daemon did not run the program.";
    step.error = step_error(error);
    return false;
}

// The index of the earlier program `program` repeats, if any.
std::optional<std::size_t> repeated(const std::vector<std::string>& earlier, const std::string& program)
{
    for (std::size_t i = 0; i < earlier.size(); ++i)
        if (same_program(earlier[i], program)) return i;
    return std::nullopt;
}

// Runs the request as step.step and fills the step; true when the run succeeded. A model's
// program that is not a valid request's source (too large, not UTF-8) is refused unrun.
net::awaitable<bool> run_step(proto::RepairStep& step, Expected<proto::ValidRunRequest> request,
                              const RepairActions& actions)
{
    if (!request) co_return refused(step, request.error());
    auto answer = co_await actions.run(std::move(*request));
    if (!answer) co_return refused(step, answer.error());
    const bool succeeded = run_succeeded(answer->receipt);
    step.outcome = succeeded ? StepOutcome::succeeded : StepOutcome::failed;
    step.detail = how_it_ended(answer->receipt);
    step.receipt = std::move(answer->receipt);
    step.receipt_not_kept = std::move(answer->receipt_not_kept);
    co_return succeeded;
}

}  // namespace

net::awaitable<proto::RepairRecord> run_repair(proto::RepairRequest request, RepairActions actions)
{
    proto::RepairRecord record;
    record.rounds_allowed = request.rounds;
    record.original_sha256 = sha256_hex(request.run.request().source);

    proto::RepairStep original;
    original.step = 0;
    original.program_sha256 = record.original_sha256;
    Expected<proto::ValidRunRequest> first = request.run;
    const bool original_succeeded = co_await run_step(original, std::move(first), actions);
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
    RepairConversation conversation(request.run.request().image, request.run.request().timeout_s);
    conversation.add_failure(request.run.request().source, *original.receipt);
    std::vector<std::string> programs{request.run.request().source};

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
        auto corrected = request.run.with_source(program);
        const bool succeeded = co_await run_step(step, std::move(corrected), actions);
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
