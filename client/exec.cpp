// `pybox exec FILE|-`: run one program in a fresh sealed box and print what it printed.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"

#include "common/files.hpp"
#include "common/limits.hpp"
#include "proto/json_text.hpp"
#include "proto/receipt.hpp"
#include "proto/run_request.hpp"
#include "proto/short_view.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

namespace pybox::client {

namespace {

// Once its turn in the run queue came, the daemon answers within the sum of its budgets
// (common/limits.hpp), even when every engine call takes the whole of its budget: the deadline
// twice (the start call may take the deadline, at least 2 s, then the program runs to it) plus
// at most 45.5 s (the checks before create 6 s, create 5 s, verify, attach and the wait's
// registration 6 s, the exit wait's margins and draining 7 s, the 2 s the start budget may exceed
// the deadline, the final inspect 2 s, cleanup 15 s, the watcher's end 2.5 s). This margin covers them.
constexpr std::chrono::seconds k_answer_margin{50};

constexpr const char* k_exit_codes =
    "Exit codes:\n"
    "  N    the program's own exit code, when it ended by itself\n"
    "  124  PyBox stopped the program at the deadline\n"
    "  125  PyBox could not run it (bad request, daemon busy or unreachable, engine\n"
    "       unreachable, image or policy check failed; nothing ran), or lost the engine\n"
    "       during the run, or pyboxd went away mid-run (the program may have run: see\n"
    "       pybox attempts)\n"
    "  137  out of memory: the kernel killed it, as reported by the engine\n"
    "The receipt (--json) always says more.";

struct ExecOptions {
    std::string program;
    double timeout_s = limits::k_default_timeout_s;
    bool json = false;
    std::string image = "stdlib";
    std::size_t output_limit_bytes = limits::k_default_output_limit_bytes;
};

Error too_large()
{
    return make_error("source_too_large",
                      "The program is larger than " + std::to_string(limits::k_max_source_bytes) + " bytes.");
}

int run_exec(const ExecOptions& options)
{
    auto source = read_program(options.program, std::cin);
    if (!source) return fail(source.error());
    const proto::RunRequest request{std::move(*source), options.timeout_s, options.image, options.output_limit_bytes};
    if (auto valid = proto::validate_run_request(request); !valid) return fail(valid.error());

    auto connection = DaemonConnection::from_environment();
    if (!connection) return fail(connection.error());
    // The daemon starts a run within its longest queue wait or answers busy, so waiting for the
    // queue, twice the deadline and the budgets never gives up on a run that may still start.
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        limits::k_max_queue_wait + 2 * std::chrono::duration<double>(options.timeout_s) + k_answer_margin);
    auto answer = connection->call("POST", "/v1/runs", proto::serialize_run_request(request), timeout);
    if (!answer && answer.error().code == "daemon_lost")
        return fail(make_error("daemon_lost", lost_daemon_message(answer.error().message)));
    if (!answer) return fail(answer.error());
    // Tolerant: a newer daemon's receipt may carry keys and values this client does not know.
    auto receipt = proto::receipt_from_json(*answer, proto::ReadMode::tolerant);
    if (!receipt)
        return fail(make_error("daemon_io", "The daemon's receipt cannot be read: " + receipt.error().message));

    if (options.json) {
        write_bytes(stdout, proto::to_json_text(*answer) + "\n");
    } else {
        const std::string& program_stderr = receipt->capture.stderr_stream.bytes;
        write_bytes(stdout, receipt->capture.stdout_stream.bytes);
        write_bytes(stderr, program_stderr);
        // A blank line between the program's words and PyBox's, on a line of its own.
        const bool open_line = !program_stderr.empty() && program_stderr.back() != '\n';
        write_bytes(stderr, std::string(open_line ? "\n\n" : "\n") + proto::render_short_receipt(*receipt));
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
        if (!bytes && bytes.error().code == "too_large") return too_large();
        return bytes;
    }
    std::string bytes(limits::k_max_source_bytes + 1, '\0');
    input.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (input.bad()) return make_error("file_unreadable", "Cannot read the program from standard input.");
    bytes.resize(static_cast<std::size_t>(input.gcount()));
    if (bytes.size() > limits::k_max_source_bytes) return too_large();
    return bytes;
}

Action configure_exec(CLI::App& command)
{
    auto options = std::make_shared<ExecOptions>();
    command.add_option("program", options->program, "Python file to run, or - for standard input")->required();
    command.add_option("--timeout", options->timeout_s, "Deadline in seconds (0.1-30)")->capture_default_str();
    command.add_flag("--json", options->json, "Print the full receipt as JSON on stdout, nothing else");
    command.add_option("--image", options->image, "Image to run in (stdlib, data)")->capture_default_str();
    command.add_option("--output-limit", options->output_limit_bytes, "Bytes kept per stream (1-65536)")
        ->check(CLI::Range(static_cast<double>(limits::k_min_output_limit_bytes),
                           static_cast<double>(limits::k_max_output_limit_bytes)))
        ->capture_default_str();
    command.footer(k_exit_codes);
    return [options] { return run_exec(*options); };
}

}  // namespace pybox::client
