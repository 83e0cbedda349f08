#include "proto/repair.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "proto/read_answer.hpp"
#include "proto/request_json.hpp"
#include "util/json_reader.hpp"
#include "util/name_table.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace pybox::proto {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 5> k_request_keys{"source", "timeout_s", "image", "output_limit_bytes", "rounds"};

constexpr util::NameTable<StepOutcome, 7> k_outcome_names{{
    {StepOutcome::succeeded, "succeeded"},
    {StepOutcome::failed, "failed"},
    {StepOutcome::no_usable_block, "no_usable_block"},
    {StepOutcome::repeated_program, "repeated_program"},
    {StepOutcome::model_failed, "model_failed"},
    {StepOutcome::run_refused, "run_refused"},
    {StepOutcome::not_run, "not_run"},
}};

constexpr util::NameTable<StopReason, 9> k_stop_names{{
    {StopReason::original_succeeded, "original_succeeded"},
    {StopReason::fixed, "fixed"},
    {StopReason::rounds_used, "rounds_used"},
    {StopReason::repeated_program, "repeated_program"},
    {StopReason::no_usable_block, "no_usable_block"},
    {StopReason::model_failed, "model_failed"},
    {StopReason::run_refused, "run_refused"},
    {StopReason::budget_exhausted, "budget_exhausted"},
    {StopReason::cancelled, "cancelled"},
}};

// The enum named `key`: strict mode refuses a name it does not know, tolerant mode keeps it as
// Enum::unrecognized.
template <class Enum, std::size_t N>
Enum read_name(util::ObjectReader& reader, std::string_view key, const util::NameTable<Enum, N>& names)
{
    if (auto value = util::value_of(names, reader.string(key))) return *value;
    if (reader.mode() == util::ReadMode::strict) reader.fail(key, "is not a known name");
    return Enum::unrecognized;
}

json::value program_json(const std::optional<std::string>& program)
{
    return program ? json::value(*program) : json::value(nullptr);
}

json::object step_to_json(const RepairStep& step)
{
    json::value model_call = nullptr;
    if (step.model_call) {
        const ModelCall& call = *step.model_call;
        model_call = json::object{{"model", call.model},
                                  {"prompt_tokens", call.prompt_tokens},
                                  {"completion_tokens", call.completion_tokens},
                                  {"latency_s", call.latency_s},
                                  {"tries", call.tries},
                                  {"finish_reason", call.finish_reason}};
    }
    json::value error = nullptr;
    if (step.error) error = json::object{{"code", step.error->code}, {"message", step.error->message}};
    json::object written{{"step", step.step},
                         {"model_call", std::move(model_call)},
                         {"program", program_json(step.program)},
                         {"program_sha256", step.program_sha256},
                         {"receipt", step.receipt ? receipt_to_json(*step.receipt) : json::value(nullptr)},
                         {"outcome", to_string(step.outcome)},
                         {"detail", step.detail},
                         {"error", std::move(error)}};
    if (step.receipt_not_kept) written["receipt_not_kept"] = *step.receipt_not_kept;
    return written;
}

RepairStep read_step(util::ObjectReader& reader, std::string& error)
{
    RepairStep step;
    step.step = reader.small_int("step");
    if (reader.any("model_call").is_object()) {
        auto call = reader.object("model_call");
        step.model_call = ModelCall{call.string("model"),       call.int64("prompt_tokens"), call.int64("completion_tokens"),
                                    call.number("latency_s"),   call.small_int("tries"),     call.string("finish_reason")};
        call.finish();
    } else if (!reader.any("model_call").is_null()) {
        reader.fail("model_call", "must be an object or null");
    }
    step.program = reader.optional_string("program");
    step.program_sha256 = reader.string("program_sha256");
    const auto& receipt = reader.any("receipt");
    if (receipt.is_object()) {
        auto read = receipt_from_json(receipt, reader.mode());
        if (read)
            step.receipt = std::move(*read);
        else if (error.empty())
            error = reader.child_path("receipt") + ": " + read.error().message;
    } else if (!receipt.is_null()) {
        reader.fail("receipt", "must be an object or null");
    }
    if (const json::value* why = reader.if_present("receipt_not_kept"); why != nullptr && why->is_string())
        step.receipt_not_kept = std::string(why->get_string());
    else if (why != nullptr)
        reader.fail("receipt_not_kept", "must be a string");
    step.outcome = read_name(reader, "outcome", k_outcome_names);
    step.detail = reader.string("detail");
    if (reader.any("error").is_object()) {
        auto read = reader.object("error");
        step.error = StepError{read.string("code"), read.string("message")};
        read.finish();
    } else if (!reader.any("error").is_null()) {
        reader.fail("error", "must be an object or null");
    }
    reader.finish();
    return step;
}

}  // namespace

std::string_view to_string(StepOutcome outcome)
{
    return util::name_of(k_outcome_names, outcome);
}

std::string_view to_string(StopReason reason)
{
    return util::name_of(k_stop_names, reason);
}

Expected<RepairRequest> parse_repair_request(std::string_view body)
{
    auto document = parse_request_json(body);
    if (!document) return document.error();
    if (!document->is_object())
        return invalid_request("The request body must be one JSON object with the key \"source\".");
    json::object run = document->get_object();
    for (const auto& [key, value] : run)
        if (std::find(k_request_keys.begin(), k_request_keys.end(), std::string_view(key)) == k_request_keys.end())
            return invalid_request("Unknown key \"" + util::printable_excerpt(key) +
                                   "\"; the accepted keys are source, timeout_s, image, output_limit_bytes and rounds "
                                   "(a repair moves no files).");
    int rounds_allowed = limits::k_default_repair_rounds;
    if (const auto* rounds = run.if_contains("rounds")) {
        if (!rounds->is_int64() || rounds->get_int64() < 1 || rounds->get_int64() > limits::k_max_repair_rounds)
            return make_error(api_error::k_rounds_out_of_range, "rounds must be a whole number from 1 to " +
                                                         std::to_string(limits::k_max_repair_rounds) + " (got " +
                                                         util::printable_excerpt(json::serialize(*rounds)) + ").");
        rounds_allowed = static_cast<int>(rounds->get_int64());
        run.erase("rounds");
    }
    auto parsed = run_request_from_json(run);
    if (!parsed) return parsed.error();
    return RepairRequest{std::move(*parsed), rounds_allowed};
}

std::string serialize_repair_request(const RepairRequest& request)
{
    auto run = json::parse(serialize_run_request(request.run.request())).as_object();
    run["rounds"] = request.rounds;
    return json::serialize(run);
}

json::value to_json(const RepairRecord& record)
{
    json::array steps;
    for (const auto& step : record.steps) steps.push_back(step_to_json(step));
    return json::object{{"rounds_allowed", record.rounds_allowed},
                        {"original_sha256", record.original_sha256},
                        {"steps", std::move(steps)},
                        {"stop_reason", to_string(record.stop_reason)},
                        {"final_step", record.final_step ? json::value(*record.final_step) : json::value(nullptr)}};
}

Expected<RepairRecord> repair_record_from_json(const json::value& document, util::ReadMode mode)
{
    std::string receipt_error;
    auto record = read_answer<RepairRecord>(document, mode, "repair record", [&](util::ObjectReader& reader) {
        RepairRecord read;
        read.rounds_allowed = reader.small_int("rounds_allowed");
        read.original_sha256 = reader.string("original_sha256");
        for (auto& step : reader.objects("steps")) read.steps.push_back(read_step(step, receipt_error));
        read.stop_reason = read_name(reader, "stop_reason", k_stop_names);
        reader.small_int("final_step", &read.final_step);
        if (read.final_step && (*read.final_step < 0 || *read.final_step >= static_cast<int>(read.steps.size())))
            reader.fail("final_step", "does not name a step");
        return read;
    });
    if (!record) return record.error();
    if (!receipt_error.empty())
        return make_error(api_error::k_invalid_answer, "The daemon's repair record cannot be read: " + util::printable_excerpt(receipt_error, 200) + ".");
    return record;
}

}  // namespace pybox::proto
