// One run's receipt end to end through the real pipeline over the BoxEngine fake
// (SealedRunService, IssuingRunService, ReceiptStore, ApiRouter, StreamedAnswer): assembled
// once (the sweep's summary included), issued once, and the bytes the store keeps, the plain
// answer's body and the stream's receipt event carry are those same bytes, the ones the
// installation signed.
#include "common/files.hpp"
#include "daemon/records/installation.hpp"
#include "daemon/records/receipt_store.hpp"
#include "daemon/run/issuing_run.hpp"
#include "daemon/run/sealed_run.hpp"
#include "daemon/server/api_router.hpp"
#include "daemon/server/streamed_answer.hpp"
#include "proto/receipt_signature.hpp"
#include "proto/run_answer.hpp"
#include "proto/run_events.hpp"
#include "tests/support/fake_box_engine.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/temp_runtime.hpp"
#include "util/json_writer.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <string>

using namespace pybox;
namespace json = boost::json;
namespace net = boost::asio;

namespace {

// The services a run does not touch: each answers an error, or an empty answer.
struct Untouched final : daemon::EngineControl, daemon::ImageService, daemon::AttemptRecords, daemon::Doctor,
                         daemon::RepairService {
    static Error unused() { return make_error("internal_error", "not part of a run"); }
    net::awaitable<Expected<proto::EngineStartAnswer>> start() override { co_return unused(); }
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override { co_return unused(); }
    net::awaitable<proto::EngineStatus> status() override { co_return proto::EngineStatus{}; }
    net::awaitable<Expected<proto::SetupAnswer>> setup(std::vector<std::string>, bool) override { co_return unused(); }
    net::awaitable<Expected<proto::ImageList>> list() override { co_return unused(); }
    net::awaitable<Expected<proto::SetupAnswer>> build_own(std::string, std::string) override { co_return unused(); }
    net::awaitable<Expected<proto::ImageList>> remove_own(std::string) override { co_return unused(); }
    proto::SetupProgress progress() override { return {}; }
    Expected<proto::AttemptsAnswer> list(std::optional<std::uint32_t>) override { return unused(); }
    net::awaitable<proto::DoctorAnswer> check(std::optional<std::uint32_t>) override { co_return proto::DoctorAnswer{}; }
    net::awaitable<Expected<proto::RepairRecord>> repair(proto::RepairRequest, std::uint32_t,
                                                         net::cancellation_slot) override
    {
        co_return unused();
    }
};

const json::value& sweep_summary()
{
    static const json::value summary = json::parse(R"({"at":"2026-12-04T23:00:00.000000Z","removed":1})");
    return summary;
}

struct Pipeline {
    test::TempRuntime runtime;
    net::io_context io;
    test::FakeBoxEngine engine{io};
    SigningKey key = *daemon::load_or_create_signing_key(runtime.paths);
    daemon::ReceiptStore store{runtime.paths.receipts_dir(), *daemon::load_or_create_signing_key(runtime.paths)};
    std::optional<daemon::SealedRunService> sealed;
    std::optional<daemon::IssuingRunService> issuing;
    Untouched untouched;
    std::optional<daemon::ApiRouter> router;

    Pipeline()
    {
        daemon::ImageVerifier verify = [](std::string) -> net::awaitable<Expected<daemon::VerifiedImage>> {
            co_return daemon::VerifiedImage{"sha256:" + std::string(64, 'a'), std::string(64, 'b')};
        };
        sealed.emplace(io.get_executor(), engine, engine, std::move(verify),
                       daemon::AttemptTracking{daemon::AttemptLog(runtime.paths)}, std::string(32, 'c'),
                       [] { return sweep_summary(); }, daemon::WatchSetup{});
        issuing.emplace(*sealed, store);
        router.emplace(daemon::DaemonServices{*issuing, untouched, untouched, untouched, untouched, untouched, store});
    }

    // POST /v1/runs as the server streams it: the router's answer, and the events told on the way.
    daemon::ApiResponse streamed_run(const std::string& body, std::string& events)
    {
        daemon::StreamedAnswer answer(io.get_executor());
        auto response = test::run_to_result(
            io, router->handle(daemon::ApiRequest{"POST", "/v1/runs", body}, daemon::Caller{1001, false}, {}, &answer));
        answer.finish(response);
        events = answer.take();
        return response;
    }

    std::string kept_file(const std::string& run_id) const
    {
        return *read_file_capped(runtime.paths.receipts_dir() / (run_id + ".json"), 1 << 20);
    }
};

}  // namespace

TEST_CASE("One run's receipt bytes are the same in the kept file, the answer's body and the stream's receipt event")
{
    Pipeline p;
    p.engine.program.out = "42\n";
    std::string events;
    const auto response = p.streamed_run(R"J({"source": "print(6*7)"})J", events);
    REQUIRE(response.status == 200);
    CHECK_FALSE(response.receipt_not_kept);

    // The plain answer's body is the receipt, signed by the installation over its RFC 8785 form.
    const std::string& answered = response.body;
    const auto verified = proto::verify_receipt(answered, p.key.public_key());
    REQUIRE(verified.has_value());
    const std::string run_id = verified->run_id;

    // The kept file wraps those same bytes.
    CHECK(p.kept_file(run_id) == R"({"owner_uid":1001,"receipt":)" + answered + "}");

    // The stream's last event wraps them too.
    REQUIRE(events.ends_with("\n"));
    const std::string last = events.substr(events.rfind('\n', events.size() - 2) + 1);
    CHECK(last == R"({"event":"receipt","answer":)" + answered + "}\n");

    // The sweep's summary is part of what was assembled and signed, not added after.
    const auto receipt = proto::receipt_from_json(json::parse(answered));
    REQUIRE(receipt.has_value());
    CHECK(receipt->cleanup.reconciliation == sweep_summary());
    CHECK(receipt->capture.stdout_stream.bytes == "42\n");
}

TEST_CASE("An issued receipt's text is its one writing, signed: verifying it passes, and changing it does not")
{
    test::TempRuntime runtime;
    const SigningKey key = *daemon::load_or_create_signing_key(runtime.paths);
    proto::Receipt receipt = test::sample_receipt();
    receipt.cleanup.reconciliation = sweep_summary();
    const proto::IssuedReceipt issued = proto::issue_receipt(receipt, key);
    REQUIRE_FALSE(issued.not_signed());
    REQUIRE(issued.receipt().signature.has_value());
    CHECK(proto::verify_receipt(issued.text(), key.public_key()).has_value());
    // The typed receipt is what was written: reading the text back gives it, signature aside.
    auto read = proto::receipt_from_json(json::parse(issued.text()));
    REQUIRE(read.has_value());
    read->signature = issued.receipt().signature;
    CHECK(*read == issued.receipt());
    // A receipt issued again (same content, same key) is the same bytes: Ed25519 is deterministic.
    CHECK(proto::issue_receipt(receipt, key).text() == issued.text());
}

TEST_CASE("The daemon's answer around an issued receipt is the bytes the answer's JSON writer gives, files or none")
{
    test::TempRuntime runtime;
    const SigningKey key = *daemon::load_or_create_signing_key(runtime.paths);
    proto::Receipt plain = test::sample_receipt();
    proto::Receipt moved = test::sample_receipt();
    moved.files = proto::FilesRecord{};
    for (const auto& receipt : {plain, moved}) {
        proto::IssuedRunAnswer issued{proto::issue_receipt(receipt, key), {}, std::nullopt};
        if (receipt.files) issued.outputs = {{"out.txt", "hi\n"}, {"b.bin", std::string("\xff\x00", 2)}};
        const proto::RunAnswer typed{issued.receipt.receipt(), issued.outputs, std::nullopt};
        CHECK(proto::run_answer_text(issued) == util::to_json_text(proto::to_json(typed)));
    }
}
