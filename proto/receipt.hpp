// Receipt: the record of one run (schema version 1). Top-level keys as docs/reference.md's
// "Receipt layout". Rules: never claim what was not observed (a value that could not be read
// goes into `unknown` with the reason); program output is untrusted bytes kept exactly;
// every explanation carries a code and its evidence. docs/receipt.md explains every field.
//
// Engine-reported objects (effective policy, engine state) are kept as JSON exactly as the
// engine gave them (the fields PyBox checks), so nothing is paraphrased.
#pragma once

#include "common/error.hpp"
#include "proto/box_policy.hpp"
#include "util/read_mode.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

inline constexpr int k_receipt_schema_version = 1;

// The keys of `unknown` that every receipt carries, true or false, as the seed's receipt does
// (docs/receipt.md "unknown"). Any other key is written only when true.
inline constexpr std::array<std::string_view, 3> k_seed_unknown_keys = {
    "final_resource_counters", "exact_termination_cause", "absolute_clock_alignment"};

// The `unknown` key of a removal that confirmed only the box's API object gone (a Pod's 404),
// not its containers on the node: the short view then says no more than that.
inline constexpr std::string_view k_unknown_node_cleanup = "node_cleanup";
// The `unknown` key of a box whose network is not `none` but a network of its own that a policy
// denies (a Pod's, with PyBox's deny-all NetworkPolicy), whose enforcement is not observable.
inline constexpr std::string_view k_unknown_network_enforcement = "network_enforcement";

// Every enum below has a last member `unrecognized`: only the tolerant reader sets it, for a
// name this build does not know (a newer daemon's), and keeps that name in
// Receipt::unrecognized. No daemon writes it; written back, it reads "UNRECOGNIZED".

struct Identity {
    std::string run_id;           // 32 hex chars
    std::string installation_id;  // the owner label
    std::string image;            // "stdlib"
    std::string image_id;         // "sha256:..." checked against images.json
    std::string recipe_sha256;
    std::string created_at;       // RFC 3339, host wall clock
    std::int64_t expires_at = 0;  // unix seconds, the box's pybox.expires label
    // The version of the pyboxd that wrote the receipt (common/version.hpp: "0.1.0+c0b8f2b").
    // Daemons before it wrote none; readers accept that and leave it empty.
    std::string daemon_version = {};

    friend bool operator==(const Identity&, const Identity&) = default;
};

// The engine the run went to (docs/receipt.md "engine"): its id in config.json ("local" for the
// private engine or "engine_socket") and its address, "unix:///path" or "ssh://user@host:port"
// (never a key, a password or a key's path).
struct EngineRef {
    std::string id;
    std::string address;

    friend bool operator==(const EngineRef&, const EngineRef&) = default;
};

// How `configured` spells two settings in the keys it has always had: `nano_cpus` is the
// policy's cpu_millis in billionths of a core, and `log_driver` is always "none" (no engine is
// asked to keep a copy of a box's output; PyBox captures it).
inline constexpr std::int64_t k_nano_cpus_per_milli = 1'000'000;
inline constexpr std::string_view k_log_driver = "none";

struct Configured {
    double wall_timeout_s = 0;
    double guest_timer_s = 0;
    std::int64_t output_limit_bytes = 0;
    BoxPolicy policy;
    std::vector<std::string> command;
    // Runs that move files: the SHA-256 of the fixed files helper (the `-c` program of
    // `command`); nullopt for every other run.
    std::optional<std::string> files_helper_sha256;

    friend bool operator==(const Configured&, const Configured&) = default;
};

// How the program ended, as far as PyBox can tell.
enum class TerminationMechanism {
    target_exit_observed,  // ended by itself (exit or a signal not sent by PyBox)
    deadline_kill,         // PyBox sent SIGKILL at the deadline and the box then ended
    cause_not_established, // a kill was sent but the order of kill and exit is not certain
    stopped_on_disconnect, // PyBox killed the box because the client went away
    out_of_memory,         // the engine reported OOMKilled
    not_started,           // the program never started (PyBox refused or failed before start)
    engine_lost,           // the engine stopped answering; the end was not observed
    unrecognized,
};
std::string_view to_string(TerminationMechanism mechanism);
std::optional<TerminationMechanism> termination_from_string(std::string_view text);

// The engine's answer to PyBox's POST /kill: 204 (accepted), 409 (the box had already
// stopped: not_running), or an error or timeout (failed).
enum class KillAnswer { accepted, not_running, failed, unrecognized };
std::string_view to_string(KillAnswer answer);
std::optional<KillAnswer> kill_answer_from_string(std::string_view text);

// Who is known to have sent the signal that ended the box.
enum class SignalSource {
    pybox_kill,  // PyBox's SIGKILL, accepted by the engine, and the box ended after it
    oom_kill,    // the kernel's OOM killer, reported by the engine (OOMKilled) or the kernel's counter
    wait_status, // the wait status of the program's process (the kernel's record); the sender is not known
    box_timer,   // the box timer in the box's first process (the deadline and its margin)
    unrecognized,
};
std::string_view to_string(SignalSource source);
std::optional<SignalSource> signal_source_from_string(std::string_view text);

// How one process ended, as the kernel recorded it (observed.termination.program_end and
// box_end): exactly one of exit_code and signal. The times are on the daemon's monotonic clock,
// which is the kernel's.
struct ProcessEndRecord {
    std::string source;                      // where the fact comes from: "kernel_proc_connector"
    std::optional<std::int64_t> exit_code;   // it exited with this code
    std::optional<int> signal;               // a signal ended it
    std::optional<double> since_kill_sent_s; // its end minus PyBox's kill (negative: before); null: no kill
    std::optional<double> since_delivery_s;  // its end minus the program's delivery to the box

    friend bool operator==(const ProcessEndRecord&, const ProcessEndRecord&) = default;
};

struct Termination {
    TerminationMechanism mechanism = TerminationMechanism::not_started;
    // The program's own exit code when the kernel recorded it exiting; otherwise the box's, as
    // the engine reported it.
    std::optional<std::int64_t> exit_code;
    std::optional<int> signal;              // only when observed: see signal_source
    bool deadline_kill_sent = false;        // PyBox sent POST /kill at the deadline, whatever the answer
    std::optional<double> engine_lifetime_s;  // FinishedAt - StartedAt (engine clock), to the nanosecond
    std::optional<SignalSource> signal_source = {};
    // exit_code - 128 for 129-159 when no signal was observed: the box's first process (GNU
    // timeout as PID 1) reports a child's signal death as 128 + n, and a program may exit
    // with such a code itself, so the signal is only inferred.
    std::optional<int> inferred_signal = {};
    std::optional<KillAnswer> deadline_kill_answer = {};      // null when no deadline kill was sent
    std::optional<std::string> deadline_kill_sent_at = {};  // daemon wall clock, RFC 3339 UTC
    // The program's (the interpreter's) end and the box's (its first process's), apart; null
    // when the kernel's record of it was not read (unknown.program_end says why).
    std::optional<ProcessEndRecord> program_end = {};
    std::optional<ProcessEndRecord> box_end = {};

    friend bool operator==(const Termination&, const Termination&) = default;
};

// What the program's environment held beyond what PyBox set (observed.environment): where the
// fact comes from, and every variable PyBox did not set or set to another value, "NAME=value",
// in ascending byte order of the names.
struct EnvironmentRecord {
    std::string source;
    std::vector<std::string> beyond_spec;

    friend bool operator==(const EnvironmentRecord&, const EnvironmentRecord&) = default;
};

struct Observed {
    bool policy_verified_before_start = false;
    boost::json::value effective_policy;  // HostConfig fields as read back, plus "mismatches"
    boost::json::value engine_state;      // State fields from the final inspect, or null
    boost::json::value resources;         // {"status": "UNKNOWN", "reason": ...} until the watcher lands
    Termination termination;
    // nullopt: not observed (unknown.environment says why, once the program started). Receipts
    // of daemons before it have none.
    std::optional<EnvironmentRecord> environment = {};

    friend bool operator==(const Observed&, const Observed&) = default;
};

struct StreamRecord {
    std::string bytes;  // exactly what was kept (may be any bytes)
    std::uint64_t total_bytes = 0;
    std::uint64_t dropped_bytes() const { return total_bytes - bytes.size(); }
    bool truncated() const { return total_bytes > bytes.size(); }

    friend bool operator==(const StreamRecord&, const StreamRecord&) = default;
};

struct Capture {
    StreamRecord stdout_stream;
    StreamRecord stderr_stream;
    bool output_complete = false;  // the stream ended cleanly and nothing was dropped
    std::optional<std::string> stream_error;  // a framing error or a broken connection
    // How the output reached PyBox: a sealed run's engine's means (BoxEngine::output_provenance),
    // an unsealed run's the client's pipes.
    std::string provenance;

    friend bool operator==(const Capture&, const Capture&) = default;
};

struct Phase {
    std::string name;          // "validate", "create", "verify", "attach", "start", "run", "inspect", "remove"
    double started_s = 0;      // monotonic, from the run's start
    double duration_s = 0;
    std::string outcome;       // "ok", "timeout", "failed", "skipped"

    friend bool operator==(const Phase&, const Phase&) = default;
};

// A warm box's making, before its request (docs/receipt.md "lifecycle"): its phases (create,
// verify, start) in seconds from the start of its making, how long that took, and how long the
// started box then waited for its program.
struct Preparation {
    std::vector<Phase> phases;
    double total_s = 0;
    double waited_s = 0;

    friend bool operator==(const Preparation&, const Preparation&) = default;
};

struct Lifecycle {
    bool warm = false;  // the run took a warm box (made before its request)
    std::optional<std::string> box_started_at;  // RFC 3339, daemon wall clock: the start call's answer
    std::optional<Preparation> preparation;     // a warm box's making; nullopt for a cold box
    std::string last_phase;
    bool cancelled = false;
    std::vector<std::string> timeouts;  // names of the budgets that fired
    std::vector<Phase> phases;
    double queued_s = 0;  // waiting for its turn in the run queue, before the run's start
    double total_s = 0;   // from the run's start (its turn) to the end of cleanup

    friend bool operator==(const Lifecycle&, const Lifecycle&) = default;
};

enum class CleanupStatus { removed, not_created, removal_unconfirmed, unrecognized };
std::string_view to_string(CleanupStatus status);
std::optional<CleanupStatus> cleanup_from_string(std::string_view text);

struct Cleanup {
    CleanupStatus status = CleanupStatus::not_created;
    bool removed = false;          // the engine answered 404 to an inspect after the delete
    int attempts = 0;
    std::optional<std::string> error;
    boost::json::value reconciliation;  // summary of the last sweep of leftover boxes

    friend bool operator==(const Cleanup&, const Cleanup&) = default;
};

// The offset of the engine's wall clock from the daemon's (engine - daemon), known to lie in
// [min_ns, max_ns]: GET /info's SystemTime bracketed by two readings of the daemon's wall clock.
struct ClockOffset {
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;

    friend bool operator==(const ClockOffset&, const ClockOffset&) = default;
};

// Which clock the engine's own times come from, in words for people, as its backend says it
// (daemon/engine/engine_probe.hpp): clock_domains' "observed.engine_state" and
// "observed.termination.engine_lifetime_s".
struct EngineClockNames {
    std::string engine_state;
    std::string engine_lifetime;

    friend bool operator==(const EngineClockNames&, const EngineClockNames&) = default;
};

struct ClockDomains {
    std::optional<ClockOffset> engine_offset;  // nullopt: not measured (unknown.absolute_clock_alignment says why)
    EngineClockNames engine_clocks;

    friend bool operator==(const ClockDomains&, const ClockDomains&) = default;
};

struct Explanation {
    std::string code;
    std::string message;
    boost::json::object evidence;

    friend bool operator==(const Explanation&, const Explanation&) = default;
};

// An explanation with its code, one sentence and the observed values it rests on.
inline Explanation explain(std::string code, std::string message, boost::json::object evidence = {})
{
    return Explanation{std::move(code), std::move(message), std::move(evidence)};
}

// A file that went into the box or came back: its name inside the working folder (inputs) or
// the output folder (outputs), its size and the SHA-256 of its bytes.
struct FileRecord {
    std::string name;
    std::uint64_t bytes = 0;
    std::string sha256;

    friend bool operator==(const FileRecord&, const FileRecord&) = default;
};

// Something the program left in the output folder that did not come back, and why (one of
// k_skip_reasons in docs/receipt.md).
struct SkippedFile {
    std::string name;  // as the box named it, undecodable bytes escaped
    std::string reason;

    friend bool operator==(const SkippedFile&, const SkippedFile&) = default;
};

// The receipt's `files`, for runs that move files (null for the others).
struct FilesRecord {
    std::string source;          // where these lists come from
    std::string working_folder;  // inside the box: the inputs, and the program's current folder
    std::string output_folder;   // inside the box: what comes back
    std::vector<FileRecord> inputs;
    std::vector<FileRecord> outputs;
    std::vector<SkippedFile> skipped;  // at most 64 listed...
    std::uint64_t skipped_unlisted = 0;  // ...and how many more were skipped
    std::vector<std::string> errors;   // transfer errors: what could not be moved, and why

    friend bool operator==(const FilesRecord&, const FilesRecord&) = default;
};

// What an unsealed run (`pybox exec --unsealed`, docs/unsealed.md) set on the host's interpreter:
// its process limits (setrlimit, soft = hard unless said), all of them per process except
// `processes`, which the kernel counts over every process of the user.
struct HostLimits {
    std::int64_t address_space_bytes = 0;  // RLIMIT_AS
    std::int64_t processes = 0;            // RLIMIT_NPROC: the user's processes and threads, all of them
    std::int64_t user_processes_at_start = 0;  // how many of those the user had when it was chosen
    std::int64_t cpu_seconds = 0;          // RLIMIT_CPU soft (SIGXCPU); the hard limit is 1 s more (SIGKILL)
    std::int64_t file_size_bytes = 0;      // RLIMIT_FSIZE
    std::int64_t open_files = 0;           // RLIMIT_NOFILE
    std::int64_t core_bytes = 0;           // RLIMIT_CORE

    friend bool operator==(const HostLimits&, const HostLimits&) = default;
};

// The facts of an unsealed run: no container, the host's interpreter run as the user.
struct UnsealedFacts {
    std::string python;              // the interpreter's absolute path (config.json unsealed_python)
    std::string working_folder;      // the fresh temporary folder it ran in
    bool working_folder_removed = false;
    std::vector<std::string> environment;  // "NAME=value", the program's whole environment
    HostLimits limits;
    // After the program's process ended, something was still in its process group (and was killed).
    bool group_killed_after_exit = false;

    friend bool operator==(const UnsealedFacts&, const UnsealedFacts&) = default;
};

// The installation's signature over the receipt (receipt_signature.hpp): key_id is the hex
// SHA-256 of the raw public key, public_key and value are base64.
struct SignatureBlock {
    std::string algorithm;
    std::string key_id;
    std::string public_key;
    std::string value;

    friend bool operator==(const SignatureBlock&, const SignatureBlock&) = default;
};
boost::json::object to_json(const SignatureBlock& block);

struct Receipt;
Expected<Receipt> receipt_from_json(const boost::json::value& document, util::ReadMode mode = util::ReadMode::strict);
Receipt make_unsealed_receipt(UnsealedFacts facts);

// A receipt is a sealed run's unless it was made by make_unsealed_receipt() (defined in
// proto/unsealed_receipt.cpp, target pybox_proto_unsealed, which only the client links: a daemon
// calling it would not link) or read from an unsealed run's JSON:
// nothing else can clear `sealed`, so a daemon's receipt is always a sealed run's. An unsealed
// receipt's sealed-only fields (k_sealed_only_fields) mean nothing and are written as null.
struct Receipt {
    bool sealed() const { return !m_unsealed.has_value(); }
    const std::optional<UnsealedFacts>& unsealed() const { return m_unsealed; }

    Identity identity;
    // Always written by this daemon; absent only in receipts of daemons older than the pool, which
    // both readers accept (nullopt).
    std::optional<EngineRef> engine;
    std::string container_id;  // empty when no box was created
    std::string source_sha256;
    std::uint64_t source_bytes = 0;
    Configured configured;
    Observed observed;
    Capture capture;
    Lifecycle lifecycle;
    Cleanup cleanup;
    ClockDomains clock_domains;
    // What could not be known -> why. Written as two keys: `unknown` ({key: true/false}: the seed's
    // three keys always, any other key only when here) and `unknown_reasons` (this map).
    std::map<std::string, std::string> unknown;
    std::optional<FilesRecord> files;            // runs that move files only
    std::vector<Explanation> explanations;
    // Tolerant reading only: the field's path -> the value this build does not know
    // ("observed.termination.mechanism" -> "QUEUE_EXPIRED").
    std::map<std::string, std::string> unrecognized;
    // Set by the daemon that issues the receipt (issue_receipt), and written last, as "signature".
    // The readers leave it unset: `pybox verify` checks a signature on the receipt's text.
    std::optional<SignatureBlock> signature;

    friend bool operator==(const Receipt&, const Receipt&) = default;

private:
    std::optional<UnsealedFacts> m_unsealed;
    friend Receipt make_unsealed_receipt(UnsealedFacts facts);
    friend Expected<Receipt> receipt_from_json(const boost::json::value& document, util::ReadMode mode);
};

// The fields only a sealed run has (dotted paths): an unsealed run's receipt writes each as null
// and names it, with the reason, in `not_applicable`.
struct SealedOnlyField {
    std::string_view path;
    std::string_view reason;
    // Added after unsealed runs: receipts of clients before it have neither the field nor its
    // entry in not_applicable, which both readers accept.
    bool may_be_absent = false;
};
const std::vector<SealedOnlyField>& sealed_only_fields();

boost::json::value receipt_to_json(const Receipt& receipt);
// Refuses a document with a different schema_version, a missing key, a wrong type or values
// that contradict each other. Strict mode also refuses keys and enum names it does not know;
// tolerant mode (clients, docs/api.md "Versioning") ignores such keys and keeps such names.
// The stream encodings ("utf-8", "base64") are a closed set in both modes: output in an
// unknown encoding cannot be shown. `sealed`, `isolation`, `not_applicable` and `unsealed` may
// all be absent (receipts of daemons before unsealed runs, all sealed); when present they must
// agree: sealed with "container", no not_applicable entries and unsealed null, or unsealed with
// "none", every sealed-only field null and named in not_applicable, and the unsealed facts.
// `unknown` is {key: boolean} with `unknown_reasons` beside it, a reason for exactly each true
// key; strict mode requires the seed's three keys and refuses a false key outside them, a true
// key without a reason and a reason without a true key. Tolerant mode also reads the form of
// receipts before `unknown_reasons` (`unknown` as {key: reason}) and reads past a true key
// without a reason (read as "no reason given") or a reason without a true key (ignored).

// The exit code `pybox exec` returns for this receipt (docs/reference.md, "Exit codes"): an
// unrecognized mechanism gives the exit code the engine reported (0-255), else 125.
int exit_code_for(const Receipt& receipt);

}  // namespace pybox::proto
