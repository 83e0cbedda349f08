// IssuingRunService (daemon/run/issuing_run.hpp): every receipt a run answers is signed and kept
// as the caller's before it goes out; a run that did not happen issues nothing; a receipt the
// keeper cannot keep goes out all the same, its answer saying so.
#include "daemon/run/issuing_run.hpp"

#include "daemon/records/installation.hpp"
#include "daemon/records/receipt_store.hpp"
#include "proto/receipt_signature.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/temp_runtime.hpp"
#include "tests/support/valid_request.hpp"
#include "util/json_writer.hpp"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <string>

namespace net = boost::asio;
using pybox::Expected;
using pybox::daemon::IssuingRunService;
using pybox::daemon::ReceiptStore;

namespace {

// Answers the sample receipt as run "1...1", or refuses a program "busy" as a full queue does.
class ScriptedRuns final : public pybox::daemon::EngineRunService {
public:
    net::awaitable<Expected<pybox::daemon::AssembledRun>> run(pybox::proto::ValidRunRequest request, std::uint32_t,
                                                             net::cancellation_slot,
                                                             pybox::daemon::RunObserver*) override
    {
        if (request.request().source == "busy") co_return pybox::make_error("busy", "The run queue is full.");
        auto receipt = pybox::test::sample_receipt();
        receipt.identity.run_id = std::string(32, '1');
        co_return pybox::daemon::AssembledRun{std::move(receipt), {}, false};
    }
};

struct Issuing {
    pybox::test::TempRuntime runtime;
    pybox::SigningKey key = *pybox::daemon::load_or_create_signing_key(runtime.paths);
    ReceiptStore store;
    ScriptedRuns runs;
    IssuingRunService service{runs, store};
    net::io_context io;

    explicit Issuing(ReceiptStore::Bounds bounds = {})
        : store(runtime.paths.receipts_dir(), *pybox::daemon::load_or_create_signing_key(runtime.paths), bounds)
    {
    }
    Expected<pybox::proto::IssuedRunAnswer> run(const std::string& source, std::uint32_t owner_uid)
    {
        return pybox::test::run_to_result(io, service.run(pybox::test::valid_request(source), owner_uid, {}, nullptr));
    }
};

}  // namespace

TEST_CASE("A run's receipt goes out signed by the installation and is kept as the caller's")
{
    Issuing issuing;
    const auto answer = issuing.run("print(1)", 1001);
    REQUIRE(answer.has_value());
    REQUIRE(answer->receipt.receipt().signature.has_value());
    CHECK(pybox::proto::verify_receipt(answer->receipt.text(), issuing.key.public_key()).has_value());
    const auto mine = issuing.store.list(1001);
    REQUIRE(mine->receipts.size() == 1);
    CHECK(mine->receipts.front().run_id == std::string(32, '1'));
    CHECK(mine->receipts.front().signed_receipt);
    CHECK(issuing.store.list(1002)->receipts.empty());
    CHECK(*issuing.store.get(std::string(32, '1'), 1001) == boost::json::parse(answer->receipt.text()));
}

TEST_CASE("A run that did not happen issues nothing")
{
    Issuing issuing;
    const auto answer = issuing.run("busy", 1001);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().code == "busy");
    CHECK(issuing.store.list(std::nullopt)->receipts.empty());
}

TEST_CASE("A receipt the keeper cannot keep still goes out, signed, and its answer says it was not kept and why")
{
    Issuing issuing(ReceiptStore::Bounds{10, 64});  // no receipt fits in 64 bytes
    const auto answer = issuing.run("print(1)", 1001);
    REQUIRE(answer.has_value());
    CHECK(answer->receipt.receipt().identity.run_id == std::string(32, '1'));
    CHECK(answer->receipt.receipt().signature.has_value());
    REQUIRE(answer->receipt_not_kept.has_value());
    CHECK_THAT(*answer->receipt_not_kept, Catch::StartsWith("pyboxd signed the receipt of run " + std::string(32, '1') +
                                                            " but could not keep it: it is larger than the 64 bytes"));
    CHECK(issuing.store.list(std::nullopt)->receipts.empty());
}

TEST_CASE("A kept receipt's answer does not say it was not kept")
{
    Issuing issuing;
    const auto answer = issuing.run("print(1)", 1001);
    REQUIRE(answer.has_value());
    CHECK_FALSE(answer->receipt_not_kept.has_value());
}
