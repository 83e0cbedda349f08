// The subcommands of `pybox`, one file each, and the pure pieces of them that tests drive.
// main.cpp wires k_commands into CLI11 and nothing else.
//
// Each configure_* declares its options on the given (sub)command and returns the action to
// run after parsing; the action returns the process exit code. Every failure is printed as
// "pybox: <message>" on stderr and exits 125.
#pragma once

#include "common/error.hpp"

#include <boost/json/value.hpp>

#include <cstdio>
#include <functional>
#include <istream>
#include <string>
#include <string_view>

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

inline constexpr int k_exit_pybox_failed = 125;
// `pybox vm status` when the engine is not running or not verified.
inline constexpr int k_exit_not_verified = 1;

// Prints "pybox: <message>" to stderr; returns 125.
int fail(const Error& error);
// Writes bytes exactly; a closed stdout or stderr is not an error worth dying for.
void write_bytes(std::FILE* stream, std::string_view bytes);

// Lenient readers for daemon answers: the string / bool / array under `key`, or empty/false.
std::string json_text(const boost::json::value& object, std::string_view key);
bool json_flag(const boost::json::value& object, std::string_view key);
const boost::json::array* json_list(const boost::json::value& object, std::string_view key);

// exec.cpp: the program from a file or, for "-", from `input`; at most 65,536 bytes.
Expected<std::string> read_program(const std::string& name, std::istream& input);

// What a command prints: text for stdout (exit 0) or for stderr (any other exit code).
struct Rendered {
    std::string text;
    int exit_code = 0;
};
Rendered render_vm_start(const boost::json::value& answer);  // vm.cpp
Rendered render_vm_status(const boost::json::value& answer);
Rendered render_setup(const boost::json::value& answer);      // setup.cpp
Rendered render_image_list(const boost::json::value& answer); // images.cpp
Rendered render_attempts(const boost::json::value& answer);   // attempts.cpp
// exec.cpp: what `pybox exec` says when pyboxd went away after it took the run ("daemon_lost").
std::string lost_daemon_message(const std::string& why);
// version.cpp: the client's line ("pybox <version> (API <api>)"), then the daemon's from its
// GET /v1/ping answer, or, when the daemon did not answer, why its version is unknown (exit 125).
std::string render_client_version();
Rendered render_daemon_version(const Expected<boost::json::value>& ping);
// Prints a Rendered to stdout or stderr by its exit code; returns the exit code.
int print(const Rendered& rendered);

}  // namespace pybox::client
