// The answers of the socket API (docs/api.md "Endpoints"), one type each, with their JSON: the
// daemon builds them and writes them with to_json(); the client reads them with the *_from_json
// readers and renders them. The receipt (POST /v1/runs) is in receipt.hpp.
//
// Reading (read_mode.hpp): ReadMode::tolerant is for clients (keys this build does not know
// are ignored, an enum value it does not know is kept as its text); ReadMode::strict is for
// tests, which check that every key written is read. Both refuse a missing key or a wrong type
// and return "invalid_answer" naming the field. Pure.
#pragma once

#include "common/error.hpp"
#include "proto/attempts.hpp"
#include "util/described_json.hpp"
#include "util/read_mode.hpp"

#include <boost/describe/class.hpp>

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

// GET /v1/ping.
struct PingAnswer {
    bool ok = true;
    std::string daemon = "pyboxd";
    std::string version;  // pyboxd's version, from CMake
    std::string api;      // "v1"

    friend bool operator==(const PingAnswer&, const PingAnswer&) = default;
};
BOOST_DESCRIBE_STRUCT(PingAnswer, (), (ok, daemon, version, api))

// One failed check of the engine: which ("ping", "info.seccomp", "images", ...) and why.
struct EngineProblem {
    std::string check;
    std::string message;

    friend bool operator==(const EngineProblem&, const EngineProblem&) = default;
};
BOOST_DESCRIBE_STRUCT(EngineProblem, (), (check, message))

// One engine of the pool (docs/api.md "The pool of engines"): the local engine first, then
// config.json's "engines" in their order.
struct PoolEngine {
    std::string id;           // "local" or the entry's id
    std::string address;      // "unix:///path" or "ssh://user@host:port", never a secret
    bool takes_runs = true;   // false only for the local engine with "local_engine": false
    bool running = false;     // the engine answered its last check
    bool verified = false;    // answered and passed every check (images included): it may take runs
    std::uint64_t busy = 0;   // runs of this daemon on it now: running plus waiting in its line
    std::vector<EngineProblem> problems;  // why it is not verified
    std::vector<std::string> notes;
    std::optional<std::string> api_version;

    friend bool operator==(const PoolEngine&, const PoolEngine&) = default;
};
BOOST_DESCRIBE_STRUCT(PoolEngine, (), (id, address, takes_runs, running, verified, busy, problems, notes, api_version))

// GET /v1/vm/status; POST /v1/vm/start answers the same plus `started` and `seconds`.
// The keys before `engines` describe the local engine, as they did before the pool.
struct EngineStatus {
    bool running = false;
    bool verified = false;  // running, answering, and every check passed
    std::string engine_socket;
    bool is_private = false;  // "private": PyBox's own dockerd, not one named in config.json
    std::string runtime;      // the OCI runtime the daemon asks for ("runc", "runsc")
    std::vector<EngineProblem> problems;
    std::vector<std::string> notes;
    std::optional<int> pid;                  // the private dockerd's, when it runs
    std::optional<std::string> api_version;  // the engine API version negotiated, once it answered
    // Every engine of the pool; empty (and the key absent) when config.json names no "engines".
    std::vector<PoolEngine> engines;

    friend bool operator==(const EngineStatus&, const EngineStatus&) = default;
};
BOOST_DESCRIBE_STRUCT(EngineStatus, (), (running, verified, engine_socket, is_private, runtime, problems, notes, pid, api_version, engines))
// "private" is a keyword in C++; `engines` is written only for a pool.
inline constexpr util::JsonMemberRule k_engine_status_rules[] = {
    {"is_private", "private"},
    {"engines", {}, util::JsonPresence::when_set},
};
inline std::span<const util::JsonMemberRule> json_member_rules(const EngineStatus*) { return k_engine_status_rules; }

struct EngineStartAnswer : EngineStatus {
    bool started = false;  // this call launched dockerd (false: it was already running, or is not PyBox's)
    double seconds = 0;

    friend bool operator==(const EngineStartAnswer&, const EngineStartAnswer&) = default;
};
BOOST_DESCRIBE_STRUCT(EngineStartAnswer, (EngineStatus), (started, seconds))

// POST /v1/vm/stop.
struct EngineStopAnswer {
    bool running = false;  // always false: a stop that fails is an error answer
    bool stopped = false;  // a running dockerd was stopped (false: it was not running)
    bool forced = false;   // it needed SIGKILL
    std::string engine_socket;
    double seconds = 0;
    std::vector<std::string> notes;

    friend bool operator==(const EngineStopAnswer&, const EngineStopAnswer&) = default;
};
BOOST_DESCRIBE_STRUCT(EngineStopAnswer, (), (running, stopped, forced, engine_socket, seconds, notes))

// The `status` of one image in a setup answer. A strict reader accepts only these two; a
// tolerant one keeps any other text as it was written.
inline constexpr std::string_view k_setup_built = "built";
inline constexpr std::string_view k_setup_up_to_date = "up_to_date";
inline constexpr std::string_view k_setup_from_cache = "from_cache";
inline constexpr std::string_view k_setup_pulled = "pulled";  // taken by its pinned reference (config's stdlib_image)

// One image of POST /v1/setup.
struct SetupImage {
    std::string name;
    std::string image_id;
    std::string recipe_sha256;
    std::string status{k_setup_built};
    double seconds = 0;
    std::string tar_sha256;
    bool lock_refreshed = false;
    std::optional<std::string> previous_image_id;  // only when a rebuild replaced another image
    std::optional<bool> previous_image_removed;    // with previous_image_id

    friend bool operator==(const SetupImage&, const SetupImage&) = default;
};
BOOST_DESCRIBE_STRUCT(SetupImage, (), (name, image_id, recipe_sha256, status, seconds, tar_sha256, lock_refreshed, previous_image_id, previous_image_removed))
inline constexpr util::JsonMemberRule k_setup_image_rules[] = {
    {"previous_image_id", {}, util::JsonPresence::when_set},
    {"previous_image_removed", {}, util::JsonPresence::when_set},
};
inline std::span<const util::JsonMemberRule> json_member_rules(const SetupImage*) { return k_setup_image_rules; }
// Strictly, `status` is one of the three above; in both modes, previous_image_removed comes only
// with previous_image_id.
void check_json(util::ObjectReader& reader, const SetupImage& image);

struct SetupAnswer {
    std::vector<SetupImage> images;

    friend bool operator==(const SetupAnswer&, const SetupAnswer&) = default;
};
BOOST_DESCRIBE_STRUCT(SetupAnswer, (), (images))

// GET /v1/setup/progress: the image a `pybox setup` is building right now (nullopt when none),
// mmdebstrap's latest phase line, the packages downloaded so far (complete .deb files) and
// their bytes (partial ones too), and the seconds since that image's build started.
struct SetupProgress {
    std::optional<std::string> building;
    std::string phase;
    std::uint64_t downloaded_packages = 0;
    std::uint64_t downloaded_bytes = 0;
    double seconds = 0;

    friend bool operator==(const SetupProgress&, const SetupProgress&) = default;
};
BOOST_DESCRIBE_STRUCT(SetupProgress, (), (building, phase, downloaded_packages, downloaded_bytes, seconds))

// One image of GET /v1/images, as images.json records it, and whether the engine holds it.
struct ImageListEntry {
    std::string name;
    std::string image_id;
    std::string recipe_sha256;
    std::string built_at;  // RFC 3339 UTC
    std::string tar_sha256;
    std::optional<bool> present;                         // null when the engine could not tell
    std::optional<std::string> present_unknown_because;  // only when present is null

    friend bool operator==(const ImageListEntry&, const ImageListEntry&) = default;
};
BOOST_DESCRIBE_STRUCT(ImageListEntry, (), (name, image_id, recipe_sha256, built_at, tar_sha256, present, present_unknown_because))
inline constexpr util::JsonMemberRule k_image_list_entry_rules[] = {
    {"present_unknown_because", {}, util::JsonPresence::when_set},
};
inline std::span<const util::JsonMemberRule> json_member_rules(const ImageListEntry*) { return k_image_list_entry_rules; }

struct ImageList {
    std::vector<ImageListEntry> images;

    friend bool operator==(const ImageList&, const ImageList&) = default;
};
BOOST_DESCRIBE_STRUCT(ImageList, (), (images))

// One attempt note of GET /v1/attempts: a run whose end is not confirmed yet.
struct UnsettledAttempt {
    std::string run_id;
    std::string created_at;  // empty when the note is damaged
    std::int64_t expires_at = 0;
    std::string container_id;
    bool readable = true;  // false: a damaged note, of which only the run ID (its file name) is known
    bool in_progress = false;
    bool warm = false;  // a warm box waiting for its program (in_progress too)
    std::optional<std::uint32_t> owner_uid = std::nullopt;  // whose run it is (absent in older notes)

    friend bool operator==(const UnsettledAttempt&, const UnsettledAttempt&) = default;
};
BOOST_DESCRIBE_STRUCT(UnsettledAttempt, (), (run_id, created_at, expires_at, container_id, readable, in_progress, warm, owner_uid))
// A daemon older than warm boxes does not send `warm`, nor one older than system mode `owner_uid`.
inline constexpr util::JsonMemberRule k_unsettled_attempt_rules[] = {
    {"warm", {}, util::JsonPresence::since_added},
    {"owner_uid", {}, util::JsonPresence::when_set},
};
inline std::span<const util::JsonMemberRule> json_member_rules(const UnsettledAttempt*) { return k_unsettled_attempt_rules; }

// GET /v1/attempts: the unsettled notes and the journal's settled attempts, newest first.
struct AttemptsAnswer {
    std::vector<UnsettledAttempt> unsettled;
    std::uint64_t unsettled_total = 0;  // every note, also those past the answer's bound
    std::vector<SettledAttempt> settled;
    std::uint64_t damaged_lines = 0;

    friend bool operator==(const AttemptsAnswer&, const AttemptsAnswer&) = default;
};
BOOST_DESCRIBE_STRUCT(AttemptsAnswer, (), (unsettled, unsettled_total, settled, damaged_lines))

// The verdicts of one `pybox doctor` check (GET /v1/doctor). A strict reader accepts only these
// three; a tolerant one keeps any other text as it was written.
inline constexpr std::string_view k_verdict_ok = "ok";
inline constexpr std::string_view k_verdict_problem = "problem";
inline constexpr std::string_view k_verdict_unknown = "unknown";

// One check of GET /v1/doctor (docs/doctor.md lists them): its name, its verdict, what was seen
// (or, for "unknown", why it could not be seen), and for a problem the fix in one line ("" else).
struct DoctorCheck {
    std::string name;
    std::string verdict{k_verdict_ok};
    std::string detail;
    std::string fix;

    friend bool operator==(const DoctorCheck&, const DoctorCheck&) = default;
};
BOOST_DESCRIBE_STRUCT(DoctorCheck, (), (name, verdict, detail, fix))
// Strictly, `verdict` is one of the three above.
void check_json(util::ObjectReader& reader, const DoctorCheck& check);

// The checks of `pybox doctor`, in the order it prints them (docs/doctor.md): the client makes the
// first, GET /v1/doctor answers the others.
inline constexpr std::string_view k_doctor_daemon = "daemon";
inline constexpr std::string_view k_doctor_engine = "engine";
inline constexpr std::string_view k_doctor_runtime_folder = "runtime_folder";
inline constexpr std::string_view k_doctor_free_space = "free_space";
inline constexpr std::string_view k_doctor_images = "images";
inline constexpr std::string_view k_doctor_seccomp = "seccomp";
inline constexpr std::string_view k_doctor_cgroups = "cgroups";
inline constexpr std::string_view k_doctor_leftover_boxes = "leftover_boxes";
inline constexpr std::string_view k_doctor_attempts = "attempts";
inline constexpr std::string_view k_doctor_clock = "clock";
inline constexpr std::string_view k_doctor_daemon_checks[] = {
    k_doctor_engine,   k_doctor_runtime_folder, k_doctor_free_space, k_doctor_images, k_doctor_seccomp,
    k_doctor_cgroups,  k_doctor_leftover_boxes, k_doctor_attempts,   k_doctor_clock,
};

// GET /v1/doctor: the daemon's checks, in k_doctor_daemon_checks' order.
struct DoctorAnswer {
    std::vector<DoctorCheck> checks;

    friend bool operator==(const DoctorAnswer&, const DoctorAnswer&) = default;
};
BOOST_DESCRIBE_STRUCT(DoctorAnswer, (), (checks))

// One receipt the daemon keeps (GET /v1/receipts): `run_id` is the one its file is kept as; the
// rest is read from its content (trusted only when `signed_receipt`), except `bytes`, the size of
// the kept file, and `owner_uid`, the user whose run it was.
struct KeptReceipt {
    std::string run_id;
    std::string created_at;                // identity.created_at
    std::string image;                     // identity.image
    std::optional<std::int64_t> exit_code; // observed.termination.exit_code
    std::string mechanism;                 // observed.termination.mechanism
    // Its signature verifies with the installation's key and it is run_id's receipt ("signed").
    bool signed_receipt = false;
    std::uint64_t bytes = 0;
    std::uint32_t owner_uid = 0;
    std::optional<std::string> problem;    // when not signed_receipt: why, in one sentence

    friend bool operator==(const KeptReceipt&, const KeptReceipt&) = default;
};
BOOST_DESCRIBE_STRUCT(KeptReceipt, (),
                      (run_id, created_at, image, exit_code, mechanism, signed_receipt, bytes, owner_uid, problem))
inline constexpr util::JsonMemberRule k_kept_receipt_rules[] = {{"signed_receipt", "signed"},
                                                                {"problem", {}, util::JsonPresence::when_set}};
inline std::span<const util::JsonMemberRule> json_member_rules(const KeptReceipt*) { return k_kept_receipt_rules; }

// GET /v1/receipts: the kept receipts the caller may see, newest first, and the store's bounds.
struct ReceiptList {
    std::vector<KeptReceipt> receipts;
    std::uint64_t max_receipts = 0;
    std::uint64_t max_bytes = 0;

    friend bool operator==(const ReceiptList&, const ReceiptList&) = default;
};
BOOST_DESCRIBE_STRUCT(ReceiptList, (), (receipts, max_receipts, max_bytes))

// Every error answer: {"error": {"code", "message", "retryable"}}.
struct ErrorAnswer {
    std::string code;
    std::string message;
    bool retryable = false;

    friend bool operator==(const ErrorAnswer&, const ErrorAnswer&) = default;
};
BOOST_DESCRIBE_STRUCT(ErrorAnswer, (), (code, message, retryable))

boost::json::value to_json(const PingAnswer& answer);
boost::json::value to_json(const EngineStatus& answer);
boost::json::value to_json(const EngineStartAnswer& answer);
boost::json::value to_json(const EngineStopAnswer& answer);
boost::json::value to_json(const SetupAnswer& answer);
boost::json::value to_json(const SetupProgress& answer);
boost::json::value to_json(const ImageList& answer);
boost::json::value to_json(const AttemptsAnswer& answer);
boost::json::value to_json(const DoctorAnswer& answer);
boost::json::value to_json(const ReceiptList& answer);
boost::json::value to_json(const ErrorAnswer& answer);

Expected<PingAnswer> ping_answer_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<EngineStatus> engine_status_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<EngineStartAnswer> engine_start_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<EngineStopAnswer> engine_stop_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<SetupAnswer> setup_answer_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<SetupProgress> setup_progress_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<ImageList> image_list_from_json(const boost::json::value& document, util::ReadMode mode);
// A settled attempt's `box` the client does not know is kept as its text (tolerant mode).
Expected<AttemptsAnswer> attempts_answer_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<DoctorAnswer> doctor_answer_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<ReceiptList> receipt_list_from_json(const boost::json::value& document, util::ReadMode mode);
Expected<ErrorAnswer> error_answer_from_json(const boost::json::value& document, util::ReadMode mode);

}  // namespace pybox::proto
