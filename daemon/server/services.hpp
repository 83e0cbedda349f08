// The daemon's services as the socket API sees them. The server (http_server.hpp) only parses
// HTTP, checks the peer, and routes to these; each has a fake in tests/unit. Every answer is a
// type of proto/ (answers.hpp, receipt.hpp) that the router writes as JSON; a run's answer is
// written around its issued receipt's text (proto/run_answer.hpp), never writing the receipt again.
// All calls run on the daemon's single io_context; none blocks it.
#pragma once

#include "common/error.hpp"
#include "proto/answers.hpp"
#include "proto/receipt.hpp"
#include "proto/receipt_signature.hpp"
#include "proto/repair.hpp"
#include "proto/run_answer.hpp"
#include "proto/run_events.hpp"
#include "proto/run_request.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::daemon {

namespace net = boost::asio;

// What a streamed run (POST /v1/runs with Accept: application/x-ndjson, docs/api.md "Streamed
// runs") is told as it goes. Called on the daemon's executor; neither call may block or throw.
// started() comes once, when the program is given to its box; output() passes on exactly the
// bytes the receipt keeps of each stream, in order, as they are kept (none past the output
// limit), so what is told of a stream is bounded by the request's output limit.
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void started(const std::string& run_id) = 0;
    virtual void output(proto::OutputStream stream, std::string_view bytes) = 0;
};

// Runs one sealed program and answers its issued receipt (signed and kept as the caller's:
// run/issuing_run.hpp), whose text the router writes as it is. A request (validated by its
// parser) always yields a receipt (a crash, timeout or OOM is a successful run whose receipt
// says so); an Error means nothing was created.
// `owner_uid` is the user whose run it is: the box's pybox.user label, its attempt note's owner,
// and its place in the queue, where users take turns. The cancellation slot fires when the
// client disconnects: the box is then killed and removed and the receipt records
// `lifecycle.cancelled`. `observer` (may be null) is told what the run does as it goes; it must
// outlive the call.
class RunService {
public:
    virtual ~RunService() = default;
    virtual net::awaitable<Expected<proto::IssuedRunAnswer>> run(proto::ValidRunRequest request,
                                                                 std::uint32_t owner_uid,
                                                                 net::cancellation_slot cancelled,
                                                                 RunObserver* observer) = 0;
};

// The repair loop (POST /v1/repair, docs/repair.md): runs the program, and while it fails asks
// the configured model for a corrected one and runs that, as daemon/repair/repair_loop.hpp says.
// Every run is the caller's, as RunService::run's. An Error ("model_not_configured", or the
// request's own errors) means nothing ran; otherwise the record says what every step did. The
// slot fires when the client disconnects: the step in progress ends and the record says
// "cancelled".
class RepairService {
public:
    virtual ~RepairService() = default;
    virtual net::awaitable<Expected<proto::RepairRecord>> repair(proto::RepairRequest request, std::uint32_t owner_uid,
                                                               net::cancellation_slot cancelled) = 0;
};

// The private engine (or the configured external one): `pybox vm start|stop|status`.
// status() is always an answer: when not verified, its problems say why.
class EngineControl {
public:
    virtual ~EngineControl() = default;
    virtual net::awaitable<Expected<proto::EngineStartAnswer>> start() = 0;
    virtual net::awaitable<Expected<proto::EngineStopAnswer>> stop() = 0;
    virtual net::awaitable<proto::EngineStatus> status() = 0;
};

// Image recipes: `pybox setup`, `pybox image ls|build|rm`.
// setup() builds (or confirms up to date) the named images and answers for each. build_own()
// builds an own image from the recipe text (proto::ImageBuildRequest) and answers one
// SetupImage; remove_own() forgets an own image and answers the removed record, `present`
// saying whether the engine still holds the image. progress() says what a running setup or
// build is doing (GET /v1/setup/progress), without waiting for it.
class ImageService {
public:
    virtual ~ImageService() = default;
    virtual net::awaitable<Expected<proto::SetupAnswer>> setup(std::vector<std::string> images,
                                                               bool refresh_lock) = 0;
    virtual net::awaitable<Expected<proto::ImageList>> list() = 0;
    virtual net::awaitable<Expected<proto::SetupAnswer>> build_own(std::string name, std::string recipe) = 0;
    virtual net::awaitable<Expected<proto::ImageList>> remove_own(std::string name) = 0;
    virtual proto::SetupProgress progress() = 0;
};

// The record of runs whose end the daemon did not confirm: `pybox attempts`, GET /v1/attempts.
// list() answers {"unsettled": [{"run_id", "created_at", "expires_at", "container_id",
// "readable", "in_progress"}], "unsettled_total", "settled": [journal entries, newest first],
// "damaged_lines"}; an Error only when the journal cannot be read. With a viewer, only the runs
// of that uid are listed (a system pyboxd's users see their own); without, every run.
class AttemptRecords {
public:
    virtual ~AttemptRecords() = default;
    virtual Expected<proto::AttemptsAnswer> list(std::optional<std::uint32_t> viewer) = 0;
};

// A receipt as ReceiptKeeper::issue() left it: issued (proto::issue_receipt: signed unless
// signing failed) and, when it was not kept, why, in one sentence for the caller and the log
// that says whether it was signed.
struct Issuance {
    proto::IssuedReceipt receipt;
    std::optional<Error> not_kept;
};

// The receipts the daemon issues and keeps (docs/receipt.md "Signature", docs/api.md "Receipts").
// issue() issues a finished run's receipt (proto::issue_receipt) and keeps its issued text as
// `owner_uid`'s; when it could not keep it (or sign it) the run's answer goes out all the same
// (unsigned when signing failed) and Issuance::not_kept says why. list() answers the kept
// receipts, newest first, each checked against the installation's key and its run id; get() one
// of them as it was issued, "no_such_receipt" when none of that id is kept (or it is another
// user's), "receipt_not_verified" when the kept file fails that check. `viewer` as for AttemptRecords. holds() says whether a run's receipt is kept.
class ReceiptKeeper {
public:
    virtual ~ReceiptKeeper() = default;
    virtual Issuance issue(proto::Receipt receipt, std::uint32_t owner_uid) = 0;
    virtual Expected<proto::ReceiptList> list(std::optional<std::uint32_t> viewer) = 0;
    virtual Expected<boost::json::value> get(const std::string& run_id, std::optional<std::uint32_t> viewer) = 0;
    virtual bool holds(const std::string& run_id) const = 0;
};

// `pybox doctor`'s daemon-side checks (GET /v1/doctor, docs/doctor.md). Always an answer: a
// check whose observation could not be made (the engine does not answer) is "unknown" with why.
class Doctor {
public:
    virtual ~Doctor() = default;
    // `viewer` as for AttemptRecords: the attempts check counts only that user's runs.
    virtual net::awaitable<proto::DoctorAnswer> check(std::optional<std::uint32_t> viewer) = 0;
};

// The services the socket API routes to, all borrowed: they outlive the server and its router.
struct DaemonServices {
    RunService& runs;
    EngineControl& engine;
    ImageService& images;
    AttemptRecords& attempts;
    Doctor& doctor;
    RepairService& repair;
    ReceiptKeeper& receipts;
};

}  // namespace pybox::daemon
