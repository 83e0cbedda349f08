// `pybox repair FILE|-`: run a program sealed and, while it fails, let pyboxd's model correct it
// (POST /v1/repair, docs/repair.md); print each step, then the diff of the repaired program
// against the original, and write the repaired program only where --write says.
#include "client/commands.hpp"
#include "client/unified_diff.hpp"

#include "common/files.hpp"
#include "common/limits.hpp"
#include "proto/repair.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace pybox::client {

namespace {

// Covers the step the budget cuts short (its box's removal) and the answer's way back.
constexpr std::chrono::seconds k_answer_margin{50};

constexpr const char* k_exit_codes =
    "Exit codes:\n"
    "  0    the program runs: it succeeded as it was, or a repaired program did\n"
    "  1    no repaired program succeeded (the lines on stderr say why the repair stopped)\n"
    "  125  PyBox could not repair (bad request, no model configured, daemon busy or\n"
    "       unreachable), or --write could not write the repaired program (an existing\n"
    "       file is kept unless you confirm or give --force)\n"
    "The repair record (--json) has every step's program, receipt and model call.";

struct RepairOptions {
    std::string program;
    int rounds = limits::k_default_repair_rounds;
    double timeout_s = limits::k_default_timeout_s;
    std::string image = "stdlib";
    std::size_t output_limit_bytes = limits::k_default_output_limit_bytes;
    std::filesystem::path write_to;
    bool force = false;
    bool json = false;
};

std::string short_hash(const std::string& sha256)
{
    return sha256.substr(0, 12);
}

std::string step_line(const proto::RepairStep& step)
{
    std::string line = "step " + std::to_string(step.step) + "  ";
    if (step.step == 0) {
        line += "the original";
    } else if (step.model_call) {
        const auto& call = *step.model_call;
        line += "model " + util::printable_excerpt(call.model, 48) + " (" + std::to_string(call.prompt_tokens) + "+" +
                std::to_string(call.completion_tokens) + " tokens, " + util::format_number(call.latency_s) + " s)";
    } else {
        line += "model";
    }
    if (!step.program_sha256.empty()) line += "  " + short_hash(step.program_sha256);
    line += "  " + std::string(proto::to_string(step.outcome)) + ": " + step.detail;
    if (step.error) line += " " + step.error->code + ": " + step.error->message;
    if (step.receipt_not_kept) line += "\n        receipt NOT KEPT: " + util::printable_excerpt(*step.receipt_not_kept, 400);
    return line + "\n";
}

std::string stop_line(const proto::RepairRecord& record)
{
    switch (record.stop_reason) {
    case proto::StopReason::original_succeeded: return "The program succeeded as it was: nothing to repair.\n";
    case proto::StopReason::fixed: return "Repaired at step " + std::to_string(*record.final_step) + ".\n";
    case proto::StopReason::rounds_used:
        return "Not repaired: all " + std::to_string(record.rounds_allowed) + " rounds were used.\n";
    case proto::StopReason::repeated_program: return "Not repaired: the model answered a program already run.\n";
    case proto::StopReason::no_usable_block: return "Not repaired: the model's answer held no usable program.\n";
    case proto::StopReason::model_failed: return "Not repaired: the call to the model failed.\n";
    case proto::StopReason::run_refused: return "Not repaired: pyboxd did not run a program.\n";
    case proto::StopReason::budget_exhausted:
        return "Not repaired: the repair took its whole budget of " + std::to_string(limits::k_repair_budget.count()) + " s.\n";
    case proto::StopReason::cancelled: return "Not repaired: the repair was cancelled.\n";
    default: return "The repair stopped for a reason this client does not know.\n";
    }
}

bool confirm_replace(const std::filesystem::path& file, bool program_on_stdin)
{
    if (program_on_stdin || ::isatty(STDIN_FILENO) != 1 || ::isatty(STDERR_FILENO) != 1) return false;
    write_bytes(stderr, "pybox: replace " + file.string() + " with the repaired program? [y/N] ");
    std::string answer;
    std::getline(std::cin, answer);
    return answer == "y" || answer == "Y" || answer == "yes";
}

// Writes the repaired program to `file` by a rename, never over an existing file unless `force`
// or the user confirms. Returns the line to print, and whether it was written.
std::pair<std::string, bool> write_program(const std::filesystem::path& file, const std::string& program, bool force,
                                           bool program_on_stdin)
{
    const auto parent = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
    auto folder = Folder::open(parent);
    if (!folder) return {"pybox: cannot write " + file.string() + ": " + folder.error().message + "\n", false};
    const std::string leaf = file.filename().string();
    const bool exists = folder->entry_kind(leaf) != Folder::EntryKind::missing;
    const bool replace = force || (exists && confirm_replace(file, program_on_stdin));
    if (exists && !replace) return {"pybox: kept existing " + file.string() + ": use --force to replace it\n", false};
    auto temporary = folder->write_new_file(".pybox-repair-", ".tmp", program);
    if (!temporary) return {"pybox: cannot write " + file.string() + ": " + temporary.error().message + "\n", false};
    auto renamed = folder->rename_entry(*temporary, leaf, replace);
    if (!renamed || !*renamed) {
        folder->remove_file(*temporary);
        if (!renamed) return {"pybox: cannot write " + file.string() + ": " + renamed.error().message + "\n", false};
        return {"pybox: kept existing " + file.string() + ": use --force to replace it\n", false};
    }
    return {"Wrote the repaired program to " + file.string() + ".\n", true};
}

int run_repair(const RepairOptions& options)
{
    auto source = read_program(options.program, std::cin);
    if (!source) return fail(source.error());
    proto::RunRequest run;
    run.source = *source;
    run.timeout_s = options.timeout_s;
    run.image = options.image;
    run.output_limit_bytes = options.output_limit_bytes;
    auto valid = proto::validated_run_request(std::move(run));
    if (!valid) return fail(valid.error());
    const proto::RepairRequest request{std::move(*valid), options.rounds};

    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        limits::k_repair_budget + limits::k_max_queue_wait + 2 * std::chrono::duration<double>(options.timeout_s) +
        k_answer_margin);
    auto answer = call_daemon("POST", "/v1/repair", proto::serialize_repair_request(request), timeout);
    if (!answer) return fail(answer.error());
    auto record = proto::repair_record_from_json(*answer, util::ReadMode::tolerant);
    if (!record) return fail(record.error());
    if (options.json) write_bytes(stdout, util::to_json_text(*answer) + "\n");

    std::string report;
    for (const auto& step : record->steps) report += step_line(step);
    report += stop_line(*record);
    write_bytes(stderr, report);
    if (!record->final_step) return 1;
    const auto& final = record->steps[static_cast<std::size_t>(*record->final_step)];
    if (!final.program) return 0;  // the original succeeded
    if (!options.json) {
        const std::string name = options.program == "-" ? "stdin" : options.program;
        write_bytes(stdout, unified_diff(*source, *final.program, name,
                                         name + " (repaired at step " + std::to_string(final.step) + ")"));
    }
    if (options.write_to.empty()) {
        write_bytes(stderr, "The repaired program was not written: give --write FILE to keep it.\n");
        return 0;
    }
    const auto [line, written] = write_program(options.write_to, *final.program, options.force, options.program == "-");
    write_bytes(stderr, line);
    return written ? 0 : k_exit_pybox_failed;
}

}  // namespace

Action configure_repair(CLI::App& command)
{
    auto options = std::make_shared<RepairOptions>();
    command.add_option("program", options->program, "Python file to repair, or - for standard input")
        ->type_name("FILE")
        ->required();
    command.add_option("--rounds", options->rounds, "How many corrected programs the model may propose")
        ->check(CLI::Range(1, limits::k_max_repair_rounds))
        ->capture_default_str();
    command.add_option("--timeout", options->timeout_s, "Deadline of each run in seconds (0.1-30)")->capture_default_str();
    command.add_option("--image", options->image, "Image every run uses (stdlib, data, or an own image)")
        ->type_name("IMAGE")
        ->capture_default_str();
    command.add_option("--output-limit", options->output_limit_bytes, "Bytes kept per stream of each run (1-65536)")
        ->check(CLI::Range(static_cast<double>(limits::k_min_output_limit_bytes),
                           static_cast<double>(limits::k_max_output_limit_bytes)))
        ->capture_default_str();
    command.add_option("--write", options->write_to,
                       "Write the repaired program to FILE (an existing FILE is replaced only if you confirm or give "
                       "--force); without it nothing is written")
        ->type_name("FILE");
    command.add_flag("--force", options->force, "Replace an existing --write FILE without asking");
    command.add_flag("--json", options->json, "Print the repair record as JSON on stdout instead of the diff");
    command.footer(k_exit_codes);
    return [options] { return run_repair(*options); };
}

}  // namespace pybox::client
