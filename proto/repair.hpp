// The repair loop's documents (docs/api.md "POST /v1/repair", docs/repair.md): the request, read
// strictly from untrusted JSON, and the repair record the daemon answers.
//
// A request is a run request without "files" plus "rounds": {"source", "timeout_s", "image",
// "output_limit_bytes", "rounds"}. Every run of the repair uses the same timeout, image and
// output limit; "rounds" (1-k_max_repair_rounds, default k_default_repair_rounds) is how many
// corrected programs the model may be asked for.
//
// The record lists every step in order: step 0 runs the original program; each later step asks
// the model once and, when its answer holds a usable program, runs it. It ends with why the
// repair stopped. Pure; the request reader is fuzzed (tests/fuzz/repair_request_fuzz.cpp).
#pragma once

#include "common/error.hpp"
#include "common/limits.hpp"
#include "proto/receipt.hpp"
#include "proto/run_request.hpp"
#include "util/read_mode.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

struct RepairRequest {
    ValidRunRequest run;  // never has files
    int rounds = limits::k_default_repair_rounds;
};

// Error codes as parse_run_request's, plus "rounds_out_of_range"; "files" is refused
// ("invalid_request"): a repair runs programs that move no files.
Expected<RepairRequest> parse_repair_request(std::string_view body);
std::string serialize_repair_request(const RepairRequest& request);

// One call to the model, as the model service reported it (docs/model.md).
struct ModelCall {
    std::string model;  // the model that answered, as the service names it
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
    double latency_s = 0;  // the whole call: every try and wait
    int tries = 0;
    std::string finish_reason;  // "" when the service gave none

    friend bool operator==(const ModelCall&, const ModelCall&) = default;
};

// What became of one step.
enum class StepOutcome {
    succeeded,         // the program ran and exited 0 by itself
    failed,            // the program ran and failed: an exit code other than 0, its deadline, out of memory, ...
    no_usable_block,   // the model's answer held no usable program (detail says why)
    repeated_program,  // the model answered a program already run in this repair
    model_failed,      // the call to the model failed (error says how)
    run_refused,       // the daemon refused the run (error says why): nothing ran
    not_run,           // the repair had to end (budget, client gone) before the model's program ran
    unrecognized,
};
std::string_view to_string(StepOutcome outcome);

struct StepError {
    std::string code;
    std::string message;

    friend bool operator==(const StepError&, const StepError&) = default;
};

struct RepairStep {
    int step = 0;                         // 0: the original program
    std::optional<ModelCall> model_call;  // steps after 0 whose model call answered
    std::optional<std::string> program;   // the model's program (steps after 0), as run
    std::string program_sha256;           // SHA-256 of the program this step ran or would have run; "" when none
    std::optional<Receipt> receipt;       // the run's receipt, when it ran
    std::optional<std::string> receipt_not_kept;  // why the daemon did not keep it (key written only then)
    StepOutcome outcome = StepOutcome::failed;
    std::string detail;                   // one sentence: what the outcome rests on
    std::optional<StepError> error;       // model_failed, run_refused

    friend bool operator==(const RepairStep&, const RepairStep&) = default;
};

// Why the repair stopped.
enum class StopReason {
    original_succeeded,  // step 0 succeeded: nothing to repair
    fixed,               // a model's program succeeded
    rounds_used,         // every round was used and none succeeded
    repeated_program,
    no_usable_block,
    model_failed,
    run_refused,
    budget_exhausted,    // the repair took k_repair_budget
    cancelled,           // the client went away
    unrecognized,
};
std::string_view to_string(StopReason reason);

struct RepairRecord {
    int rounds_allowed = 0;
    std::string original_sha256;
    std::vector<RepairStep> steps;
    StopReason stop_reason = StopReason::rounds_used;
    // The step whose program is the result: the one that succeeded, else nullopt.
    std::optional<int> final_step;

    friend bool operator==(const RepairRecord&, const RepairRecord&) = default;
};

boost::json::value to_json(const RepairRecord& record);
// Strict mode refuses unknown keys and names; tolerant mode (the client) keeps unknown names as
// "unrecognized". Receipts inside are read with the same mode.
Expected<RepairRecord> repair_record_from_json(const boost::json::value& document, util::ReadMode mode);

}  // namespace pybox::proto
