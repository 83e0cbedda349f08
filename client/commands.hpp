// The subcommands of `pybox`, one file each, and the pure pieces of them that tests drive.
// main.cpp wires k_commands into CLI11 and nothing else.
//
// Each configure_* declares its options on the given (sub)command and returns the action to
// run after parsing; the action returns the process exit code. Every failure is printed as
// "pybox: <message>" on stderr and exits 125.
#pragma once

#include "client/daemon_connection.hpp"
#include "common/error.hpp"
#include "proto/answers.hpp"
#include "proto/receipt_signature.hpp"
#include "util/json_writer.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace pybox::client {

using Action = std::function<int()>;

struct Command {
    std::string_view name;
    std::string_view description;
    Action (*configure)(CLI::App& command);
};

Action configure_exec(CLI::App& command);
Action configure_vm(CLI::App& command);
Action configure_setup(CLI::App& command);
Action configure_image(CLI::App& command);
Action configure_version(CLI::App& command);
Action configure_attempts(CLI::App& command);
Action configure_mcp(CLI::App& command);  // mcp.cpp: the MCP server on stdio
Action configure_doctor(CLI::App& command);
Action configure_repair(CLI::App& command);  // repair.cpp: the AI repair loop
Action configure_verify(CLI::App& command);
Action configure_key(CLI::App& command);
Action configure_receipts(CLI::App& command);

inline constexpr int k_exit_pybox_failed = 125;
// `pybox vm status` when the engine is not running or not verified.
inline constexpr int k_exit_not_verified = 1;
// `pybox verify` when the receipt does not verify.
inline constexpr int k_exit_receipt_not_verified = 1;

// Prints "pybox: <message>" to stderr; returns 125.
int fail(const Error& error);
// Writes bytes exactly; a closed stdout or stderr is not an error worth dying for.
void write_bytes(std::FILE* stream, std::string_view bytes);

// Reads one daemon answer tolerantly (docs/api.md "Versioning": keys and enum values this
// build does not know are ignored or kept, never fatal); "invalid_answer" only when a key it
// needs is missing or of the wrong type.
template <class Answer>
using AnswerReader = Expected<Answer> (*)(const boost::json::value&, util::ReadMode);

template <class Answer>
Expected<Answer> read_answer(const Expected<boost::json::value>& answer, AnswerReader<Answer> read)
{
    if (!answer) return answer.error();
    return read(*answer, util::ReadMode::tolerant);
}

// exec.cpp: the program from a file or, for "-", from `input`; at most 65,536 bytes.
Expected<std::string> read_program(const std::string& name, std::istream& input);

// What a command prints: text for stdout (exit 0) or for stderr (any other exit code).
struct Rendered {
    std::string text;
    int exit_code = 0;
};
Rendered render_vm_start(const proto::EngineStartAnswer& answer);  // vm.cpp
Rendered render_vm_stop(const proto::EngineStopAnswer& answer);
Rendered render_vm_status(const proto::EngineStatus& answer);
Rendered render_setup(const proto::SetupAnswer& answer);  // setup.cpp
// setup.cpp: how `pybox setup` shows a build's progress (GET /v1/setup/progress) on stderr.
// terminal: one line rewritten in place ("\r", the line cut at k_setup_progress_columns, erase
// to its end) at every answer while an image builds, erased when none does; plain (stderr is
// not a terminal): a line per new image or phase, and again only k_setup_progress_repeat_s
// later; quiet (--quiet): nothing. "" when there is nothing to write.
enum class ProgressStyle { terminal, plain, quiet };
inline constexpr double k_setup_progress_repeat_s = 10;
inline constexpr std::size_t k_setup_progress_columns = 79;
std::string render_setup_progress(ProgressStyle style, const proto::SetupProgress& previous,
                                  const proto::SetupProgress& current);
// What ends the progress before the answer is printed: erases the terminal's line if `last`
// (the last answer shown) left one.
std::string end_setup_progress(ProgressStyle style, const proto::SetupProgress& last);
Rendered render_image_list(const proto::ImageList& answer);  // images.cpp
Rendered render_image_removed(const proto::ImageList& answer);
Rendered render_attempts(const proto::AttemptsAnswer& answer);  // attempts.cpp
// key.cpp: a public key a receipt is verified against, and the file it came from.
struct TrustedKey {
    std::filesystem::path file;
    std::string public_key;  // raw 32 bytes
};
Expected<TrustedKey> read_public_key_file(const std::filesystem::path& file);
// This installation's public key: $PYBOX_HOME's signing_key.pub.pem when PYBOX_HOME is set, else
// ~/.pybox/runtime's, else the system pyboxd's (/var/lib/pybox); "no_local_key" when none exists.
Expected<TrustedKey> local_public_key();
// `pybox key show`: the PEM, then "key id: <hex>" and "file: <path>".
std::string render_public_key(const TrustedKey& key);
// verify.cpp: what `pybox verify` prints for a verification's outcome (exit 0 or
// k_exit_receipt_not_verified).
Rendered render_verification(const Expected<proto::VerifiedReceipt>& verified, const TrustedKey& trusted);
// receipts.cpp: `pybox receipts` (a table, newest first; a receipt pyboxd could not verify is
// marked NOT VERIFIED with why) and `pybox receipts show ID` (refused, exit 125, when the receipt
// answered is not run_id's).
Rendered render_receipt_list(const proto::ReceiptList& answer);
Rendered render_kept_receipt(const boost::json::value& receipt, const std::string& run_id);
// exec.cpp: what `pybox exec` says when pyboxd went away after it took the run ("daemon_lost").
std::string lost_daemon_message(const std::string& why);
// version.cpp: the client's line ("pybox <version> (API <api>)"), then the daemon's from its
// GET /v1/ping answer, or, when the daemon did not answer, why its version is unknown (exit 125).
std::string render_client_version();
Rendered render_daemon_version(const Expected<proto::PingAnswer>& ping);
// doctor.cpp: `pybox doctor`'s exit codes: 0 when every check is ok; k_exit_doctor_problem when
// any check is a problem (a daemon that does not answer is one); k_exit_doctor_unknown when none
// is a problem but some could not be made; 125 for a bad command line.
inline constexpr int k_exit_doctor_problem = 1;
inline constexpr int k_exit_doctor_unknown = 2;
// The "daemon" check from GET /v1/ping's answer: reachable, and the same version and API as
// this client's (`client_version`, `client_api`).
proto::DoctorCheck check_daemon(const Expected<proto::PingAnswer>& ping, std::string_view client_version,
                                std::string_view client_api);
// Every check in order: `daemon`, then GET /v1/doctor's, or, when the daemon did not answer that
// (`answer` an error), each of proto::k_doctor_daemon_checks "unknown" with why.
std::vector<proto::DoctorCheck> doctor_checks(const proto::DoctorCheck& daemon,
                                              const Expected<proto::DoctorAnswer>& answer);
int doctor_exit_code(const std::vector<proto::DoctorCheck>& checks);
// One line per check ("ok", "PROBLEM", "unknown", its name and what was seen), a "fix:" line
// under each problem, and a last line that sums up; the exit code is doctor_exit_code's.
Rendered render_doctor(const std::vector<proto::DoctorCheck>& checks);
// `--json`: {"ok": bool, "exit_code": int, "checks": [{"name", "verdict", "detail", "fix"}]}.
std::string render_doctor_json(const std::vector<proto::DoctorCheck>& checks);
// Prints a Rendered to stdout or stderr by its exit code; returns the exit code.
int print(const Rendered& rendered);

// One call to pyboxd whose answer is read with `read` and rendered with `render`. With `json`,
// the daemon's answer is printed as it came (keys this client does not know included) and the
// exit code is still the rendering's. Any failure is printed and exits 125.
// call_daemon and print_answer are its two halves, for a caller that does something between.
inline Expected<boost::json::value> call_daemon(std::string_view method, std::string_view target,
                                               std::string_view body, std::chrono::milliseconds timeout)
{
    auto connection = DaemonConnection::from_environment();
    if (!connection) return connection.error();
    return connection->call(method, target, body, timeout);
}

template <class Answer>
int print_answer(const Expected<boost::json::value>& document, bool json, AnswerReader<Answer> read,
                 Rendered (*render)(const Answer&))
{
    const auto answer = read_answer(document, read);
    if (!answer) return fail(answer.error());
    const auto rendered = render(*answer);
    if (!json) return print(rendered);
    write_bytes(stdout, util::to_json_text(*document) + "\n");
    return rendered.exit_code;
}

template <class Answer>
int call_and_print(std::string_view method, std::string_view target, std::string_view body,
                   std::chrono::milliseconds timeout, bool json, AnswerReader<Answer> read,
                   Rendered (*render)(const Answer&))
{
    return print_answer(call_daemon(method, target, body, timeout), json, read, render);
}

}  // namespace pybox::client
