// `pybox exec FILE|-`: run one program in a fresh sealed box and print what it printed.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"
#include "client/files_in.hpp"
#include "client/files_out.hpp"
#include "client/short_view.hpp"
#include "client/unsealed/unsealed_run.hpp"
#include "common/api_error_codes.hpp"

#include "common/files.hpp"
#include "common/limits.hpp"
#include "proto/receipt.hpp"
#include "proto/run_answer.hpp"
#include "proto/run_request.hpp"
#include "client/short_view.hpp"
#include "util/json_writer.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace pybox::client {

namespace {

// Covers limits::k_daemon_run_worst_case_margin, the daemon's worst case past twice the deadline.
constexpr std::chrono::seconds k_answer_margin{50};

constexpr const char* k_exit_codes =
    "Exit codes:\n"
    "  N    the program's own exit code, when it ended by itself\n"
    "  124  PyBox stopped the program at the deadline (its kill, or the box timer)\n"
    "  125  PyBox could not run it (bad request, daemon busy or unreachable, engine\n"
    "       unreachable, image or policy check failed; nothing ran), or lost the engine\n"
    "       during the run, or pyboxd went away mid-run (the program may have run: see\n"
    "       pybox attempts)\n"
    "  137  out of memory: the kernel killed it; or PyBox's kill was sent and the\n"
    "       box ended with 137, but what ended the program is not established\n"
    "  128+N  the kernel recorded the program killed by signal N from inside the box\n"
    "With --unsealed: 124 at the deadline, 128+N when signal N ended the program,\n"
    "125 when it could not be started (as root, no usable interpreter).\n"
    "With --out, 125 also when an output file was not written (an existing file is\n"
    "kept without --force); the lines on stderr say which.\n"
    "The receipt (--json) always says more.";

struct ExecOptions {
    std::string program;
    double timeout_s = limits::k_default_timeout_s;
    bool json = false;
    std::string image = "stdlib";
    std::size_t output_limit_bytes = limits::k_default_output_limit_bytes;
    std::vector<std::filesystem::path> inputs;
    std::filesystem::path output_dir;
    bool force = false;
    bool unsealed = false;
};

Error too_large()
{
    return make_error(api_error::k_source_too_large,
                      "The program is larger than " + std::to_string(limits::k_max_source_bytes) + " bytes.");
}

// The program's output on stdout and stderr as it comes (a streamed run's events), then a blank
// line and the short view. What the receipt kept and was not shown as it came (all of it from a
// daemon that does not stream, or an unsealed run) is written before the short view, so the
// bytes shown are the receipt's kept bytes either way.
class RunOutput {
public:
    void show(const proto::RunEvent& event)
    {
        if (event.kind != proto::RunEvent::Kind::output) return;
        const bool out = event.stream == proto::OutputStream::stdout_stream;
        write_bytes(out ? stdout : stderr, event.bytes);
        (out ? m_shown_stdout : m_shown_stderr) += event.bytes.size();
    }

    // `receipt_not_kept`: why pyboxd did not keep it, said after the short view.
    void finish(const proto::Receipt& receipt, const std::optional<std::string>& receipt_not_kept = std::nullopt) const
    {
        const std::string& program_stdout = receipt.capture.stdout_stream.bytes;
        const std::string& program_stderr = receipt.capture.stderr_stream.bytes;
        if (program_stdout.size() > m_shown_stdout) write_bytes(stdout, program_stdout.substr(m_shown_stdout));
        if (program_stderr.size() > m_shown_stderr) write_bytes(stderr, program_stderr.substr(m_shown_stderr));
        // A blank line between the program's words and PyBox's, on a line of its own.
        const bool open_line = !program_stderr.empty() && program_stderr.back() != '\n';
        write_bytes(stderr, std::string(open_line ? "\n\n" : "\n") + render_short_receipt(receipt) +
                                (receipt_not_kept ? render_not_kept(*receipt_not_kept) : std::string()));
    }

private:
    std::size_t m_shown_stdout = 0;
    std::size_t m_shown_stderr = 0;
};

// --unsealed: no daemon, no engine (docs/unsealed.md).
int run_exec_unsealed(const ExecOptions& options, const proto::RunRequest& request)
{
    if (request.files || options.image != "stdlib")
        return fail(make_error("bad_request", "An unsealed run takes no --image, --in or --out: it runs the host's python."));
    auto receipt = unsealed::run_unsealed({request.source, request.timeout_s, request.output_limit_bytes});
    if (!receipt) return fail(receipt.error());
    if (options.json)
        write_bytes(stdout, util::to_json_text(proto::receipt_to_json(*receipt)) + "\n");
    else
        RunOutput().finish(*receipt);
    return proto::exit_code_for(*receipt);
}

int run_exec(const ExecOptions& options)
{
    auto source = read_program(options.program, std::cin);
    if (!source) return fail(source.error());
    proto::RunRequest request;
    request.source = std::move(*source);
    request.timeout_s = options.timeout_s;
    request.image = options.image;
    request.output_limit_bytes = options.output_limit_bytes;
    const bool moves_files = !options.inputs.empty() || !options.output_dir.empty();
    if (moves_files) {
        auto inputs = collect_input_files(options.inputs);
        if (!inputs) return fail(inputs.error());
        if (!options.output_dir.empty())
            if (auto writable = check_output_folder(options.output_dir); !writable) return fail(writable.error());
        request.files = proto::RunRequest::Files{std::move(*inputs), !options.output_dir.empty()};
    }
    if (auto valid = proto::validated_run_request(request); !valid) return fail(valid.error());
    if (options.unsealed) return run_exec_unsealed(options, request);

    auto connection = DaemonConnection::from_environment();
    if (!connection) return fail(connection.error());
    // The daemon starts a run within its longest queue wait or answers busy, so waiting for the
    // queue, twice the deadline and the budgets never gives up on a run that may still start.
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        limits::k_max_queue_wait + 2 * std::chrono::duration<double>(options.timeout_s) + k_answer_margin);
    // --json prints one document, so its run is not streamed; otherwise the output shows as it comes.
    RunOutput output;
    const std::string body = proto::serialize_run_request(request);
    auto reply = options.json ? read_run_reply(connection->exchange("POST", "/v1/runs", body, timeout))
                              : connection->call_streamed("/v1/runs", body, timeout,
                                                          [&output](const proto::RunEvent& event) { output.show(event); });
    if (!reply && reply.error().code == "daemon_lost")
        return fail(make_error("daemon_lost", lost_daemon_message(reply.error().message)));
    if (!reply) return fail(reply.error());
    const auto& answer = reply->answer;
    // Tolerant: a newer daemon's receipt may carry keys and values this client does not know.
    auto run = proto::run_answer_from_json(answer, util::ReadMode::tolerant, moves_files);
    if (!run) return fail(make_error("daemon_io", "The daemon's answer cannot be read: " + run.error().message));
    const proto::Receipt* receipt = &run->receipt;

    if (options.json) {
        write_bytes(stdout, util::to_json_text(moves_files ? answer.at("receipt") : answer) + "\n");
        if (reply->receipt_not_kept) write_bytes(stderr, render_not_kept(*reply->receipt_not_kept));
    } else {
        output.finish(*receipt, reply->receipt_not_kept);
    }
    if (!options.output_dir.empty()) {
        const auto report = write_output_files(options.output_dir, run->outputs, options.force);
        write_bytes(stderr, render_output_report(options.output_dir, report));
        for (const auto& file : report.files)
            if (file.outcome != OutputFileResult::Outcome::written) return k_exit_pybox_failed;
    }
    return proto::exit_code_for(*receipt);
}

}  // namespace

std::string lost_daemon_message(const std::string& why)
{
    return why + " The program may have run. Once pyboxd runs again, `pybox attempts` lists the runs whose end "
                 "it did not confirm, by start time, and what its sweep did with their boxes.";
}

Expected<std::string> read_program(const std::string& name, std::istream& input)
{
    if (name != "-") {
        auto bytes = read_file_capped(name, limits::k_max_source_bytes);
        if (!bytes && bytes.error().code == api_error::k_too_large) return too_large();
        return bytes;
    }
    std::string bytes(limits::k_max_source_bytes + 1, '\0');
    input.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (input.bad()) return make_error(api_error::k_file_unreadable, "Cannot read the program from standard input.");
    bytes.resize(static_cast<std::size_t>(input.gcount()));
    if (bytes.size() > limits::k_max_source_bytes) return too_large();
    return bytes;
}

Action configure_exec(CLI::App& command)
{
    auto options = std::make_shared<ExecOptions>();
    command.add_option("program", options->program, "Python file to run, or - for standard input")
        ->type_name("FILE")
        ->required();
    command.add_option("--timeout", options->timeout_s, "Deadline in seconds (0.1-30)")->capture_default_str();
    command.add_flag("--json", options->json,
                     "Print the full receipt as JSON on stdout, nothing else, once the run ended (without it the "
                     "program's output shows as it prints, then the short receipt)");
    command.add_option("--image", options->image, "Image to run in (stdlib, data, or an own image)")
        ->type_name("IMAGE")
        ->capture_default_str();
    command.add_option("--output-limit", options->output_limit_bytes, "Bytes kept per stream (1-65536)")
        ->check(CLI::Range(static_cast<double>(limits::k_min_output_limit_bytes),
                           static_cast<double>(limits::k_max_output_limit_bytes)))
        ->capture_default_str();
    command.add_option("--in", options->inputs,
                       "Input file or folder (repeatable): placed in the box's working folder /tmp/work, a folder "
                       "as NAME/...; at most 64 files, 8 MiB in all")
        ->type_name("PATH");
    command.add_option("--out", options->output_dir,
                       "Existing folder that receives what the program leaves in out/ (at most 64 regular files, "
                       "8 MiB in all; symlinks and special files are skipped and listed in the receipt)")
        ->type_name("DIR");
    command.add_flag("--force", options->force, "Replace existing files in the --out folder");
    command.add_flag("--unsealed", options->unsealed,
                     "Run WITHOUT a container, with the host's python (config.json unsealed_python, default "
                     "/usr/bin/python3) as you: your files and network are NOT protected; only process limits, the "
                     "deadline and the output cap hold. No pyboxd or engine needed; never used unless asked "
                     "(docs/unsealed.md)");
    command.footer(k_exit_codes);
    return [options] { return run_exec(*options); };
}

}  // namespace pybox::client
