// The pure parts of the unsealed runner (`pybox exec --unsealed`, docs/unsealed.md): which
// interpreter config.json names, the process limits, the environment, the command line, and the
// receipt made from what the run observed. No I/O here; unsealed_run.cpp does it.
#pragma once

#include "common/error.hpp"
#include "common/limited_process.hpp"
#include "proto/receipt.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::client::unsealed {

// config.json's key naming the interpreter, and its value when the key (or the file) is absent.
inline constexpr std::string_view k_python_key = "unsealed_python";
inline constexpr std::string_view k_default_python = "/usr/bin/python3";
// The temporary working folder's name under $TMPDIR (an absolute path) or /tmp.
inline constexpr std::string_view k_folder_prefix = "pybox-unsealed-";
// The environment's PATH; the interpreter itself is never looked up in it.
inline constexpr std::string_view k_path = "/usr/bin:/bin";

// The interpreter from config.json's text (nullopt: no file): the key's value, which must be an
// absolute path without NUL of at most 4096 bytes, else k_default_python. The other keys are
// the daemon's, which checks them; here only the file's being one JSON object is required.
// Errors are "config_invalid" naming `file`.
Expected<std::filesystem::path> python_from_config(const std::optional<std::string>& text,
                                                   const std::filesystem::path& file);

// The limits of a run with this deadline, when the user has `user_tasks` processes and threads:
// address space = the stdlib box's memory; processes = user_tasks + the stdlib box's pids (the
// kernel counts every task of the user against it); CPU = the deadline rounded up + 1 s; file
// size = the stdlib box's /tmp size; open files = the box's; no core files.
proto::HostLimits plan_limits(double timeout_s, std::int64_t user_tasks);
// The same as setrlimit() calls: soft = hard, except CPU (hard 1 s above soft: SIGXCPU first).
std::vector<ResourceLimit> resource_limits(const proto::HostLimits& limits);

// The program's whole environment: PATH=k_path, HOME and TMPDIR the working folder, LANG and
// LC_ALL C.UTF-8, PYTHONDONTWRITEBYTECODE=1, PYTHONIOENCODING=utf-8, PYTHONUNBUFFERED=1; nothing
// of the caller's.
std::vector<std::string> scrubbed_environment(const std::filesystem::path& working_folder);

// `<python> -I -B -`: isolated mode (no user site, no PYTHON* variables, no script folder on
// sys.path), no bytecode written, the program on stdin.
std::vector<std::string> python_command(const std::filesystem::path& python);

// What one unsealed run observed, for its receipt.
struct UnsealedEvidence {
    std::string run_id;       // 32 hex characters
    std::string created_at;   // RFC 3339 UTC, the client's wall clock
    std::string source_sha256;
    std::uint64_t source_bytes = 0;
    double timeout_s = 0;
    std::size_t output_limit_bytes = 0;
    std::string user;         // "uid:gid"
    std::vector<std::string> command;
    proto::UnsealedFacts facts;
    LimitedResult result;
    double prepare_s = 0;     // making the working folder, from the run's start
    double cleanup_s = 0;     // removing it
    std::string deadline_kill_sent_at;  // RFC 3339, when result.deadline_kill_sent
};

// The receipt (sealed false, isolation "none"): the termination decided from the wait status and
// the deadline kill, the capture as for sealed runs, the explanations (UNSEALED_RUN always).
proto::Receipt unsealed_receipt(const UnsealedEvidence& evidence);

}  // namespace pybox::client::unsealed
