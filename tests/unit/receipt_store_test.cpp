// ReceiptStore (daemon/records/receipt_store.hpp): signs and keeps issued receipts, serves them to
// their owner, reads its folder back at start, and holds its bounds, oldest dropped first.
#include "daemon/records/receipt_store.hpp"

#include "common/files.hpp"

#include "daemon/records/attempt_journal.hpp"
#include "daemon/records/attempt_records.hpp"
#include "daemon/records/attempts.hpp"
#include "daemon/records/installation.hpp"
#include "util/json_writer.hpp"
#include "proto/receipt.hpp"
#include "proto/receipt_signature.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/temp_runtime.hpp"
#include "util/json_writer.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

namespace json = boost::json;
namespace fs = std::filesystem;
using pybox::daemon::ReceiptStore;

namespace {

std::string run_id_of(int n)
{
    char id[33];
    std::snprintf(id, sizeof id, "%032x", n);
    return id;
}

// The sample receipt as run `n`, made n seconds after the first.
pybox::proto::Receipt receipt_of_run(int n, std::size_t output_bytes = 3)
{
    auto receipt = pybox::test::sample_receipt();
    receipt.identity.run_id = run_id_of(n);
    char created[40];
    std::snprintf(created, sizeof created, "2026-12-01T%02d:%02d:%02d.000000Z", n / 3600, n / 60 % 60, n % 60);
    receipt.identity.created_at = created;
    receipt.capture.stdout_stream = {std::string(output_bytes, 'o'), output_bytes};
    return receipt;
}

pybox::SigningKey key_of(const pybox::RuntimePaths& paths)
{
    auto key = pybox::daemon::load_or_create_signing_key(paths);
    REQUIRE(key.has_value());
    return std::move(*key);
}

std::size_t files_in(const fs::path& folder)
{
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(folder)) ++count;
    return count;
}

std::uintmax_t bytes_in(const fs::path& folder)
{
    std::uintmax_t bytes = 0;
    for (const auto& entry : fs::directory_iterator(folder)) bytes += entry.file_size();
    return bytes;
}

}  // namespace

TEST_CASE("The installation's key pair is made once, private, and its public key written beside it")
{
    pybox::test::TempRuntime runtime;
    const auto first = key_of(runtime.paths);
    CHECK((fs::status(runtime.paths.signing_key_file()).permissions() & fs::perms::mask) == fs::perms(0600));
    const auto again = key_of(runtime.paths);
    CHECK(again.public_key() == first.public_key());
    fs::remove(runtime.paths.public_key_file());
    const auto third = key_of(runtime.paths);
    auto pem = pybox::read_file_capped(runtime.paths.public_key_file(), 4096);
    REQUIRE(pem.has_value());
    CHECK(*pybox::public_key_from_pem(*pem) == first.public_key());
    fs::permissions(runtime.paths.signing_key_file(), fs::perms(0644));
    CHECK(pybox::daemon::load_or_create_signing_key(runtime.paths).error().code == "file_not_private");
}

TEST_CASE("An issued receipt is signed, kept as its owner's, and served as issued")
{
    pybox::test::TempRuntime runtime;
    const auto public_key = key_of(runtime.paths).public_key();
    ReceiptStore store(runtime.paths.receipts_dir(), key_of(runtime.paths));
    const auto issued = store.issue(receipt_of_run(1), 1001);
    REQUIRE_FALSE(issued.not_kept);
    REQUIRE(issued.receipt.receipt().signature.has_value());
    CHECK(store.holds(run_id_of(1)));
    // The file is the issued text, byte for byte, in its envelope.
    CHECK(*pybox::read_file_capped(runtime.paths.receipts_dir() / (run_id_of(1) + ".json"), 1 << 20) ==
          R"({"owner_uid":1001,"receipt":)" + issued.receipt.text() + "}");

    auto kept = store.get(run_id_of(1), 1001);
    REQUIRE(kept.has_value());
    CHECK(pybox::util::to_json_text(*kept) == issued.receipt.text());
    CHECK(pybox::proto::verify_receipt(pybox::util::to_json_text(*kept), public_key).has_value());
    CHECK(store.get(run_id_of(1), 1002).error().code == "no_such_receipt");
    CHECK(store.get(run_id_of(1), std::nullopt).has_value());
    CHECK(store.get(run_id_of(2), std::nullopt).error().code == "no_such_receipt");
    CHECK(store.get("../../etc/passwd", std::nullopt).error().code == "no_such_receipt");

    pybox::proto::Receipt other = receipt_of_run(2);
    REQUIRE_FALSE(store.issue(other, 1002).not_kept);
    const auto mine = store.list(1001);
    REQUIRE(mine->receipts.size() == 1);
    const auto& entry = mine->receipts.front();
    CHECK(entry.run_id == run_id_of(1));
    CHECK(entry.image == "stdlib");
    CHECK(entry.exit_code == 0);
    CHECK(entry.mechanism == "TARGET_EXIT_OBSERVED");
    CHECK(entry.signed_receipt);
    CHECK(entry.bytes == fs::file_size(runtime.paths.receipts_dir() / (run_id_of(1) + ".json")));
    const auto all = store.list(std::nullopt);
    REQUIRE(all->receipts.size() == 2);
    CHECK(all->receipts.front().run_id == run_id_of(2));  // newest first
}

TEST_CASE("A restarted store reads back what it kept and leaves other files alone")
{
    pybox::test::TempRuntime runtime;
    {
        ReceiptStore store(runtime.paths.receipts_dir(), key_of(runtime.paths));
        for (int n = 1; n <= 3; ++n) {
            pybox::proto::Receipt receipt = receipt_of_run(n);
            REQUIRE_FALSE(store.issue(receipt, 1001).not_kept);
        }
    }
    REQUIRE(pybox::write_file_atomic(runtime.paths.receipts_dir() / "notes.txt", "x").has_value());
    REQUIRE(pybox::write_file_atomic(runtime.paths.receipts_dir() / (run_id_of(9) + ".json"), "{\"owner_uid\":1}").has_value());
    ReceiptStore again(runtime.paths.receipts_dir(), key_of(runtime.paths));
    CHECK(again.load() == 2);
    const auto list = again.list(std::nullopt);
    REQUIRE(list->receipts.size() == 3);
    CHECK(list->receipts.front().run_id == run_id_of(3));
    CHECK(again.get(run_id_of(2), 1001).has_value());
}

TEST_CASE("Over 1,000 runs the store keeps its count and byte bounds, dropping the oldest first")
{
    pybox::test::TempRuntime runtime;
    const ReceiptStore::Bounds bounds{100, 400 * 1024};
    ReceiptStore store(runtime.paths.receipts_dir(), key_of(runtime.paths), bounds);
    for (int n = 1; n <= 1000; ++n) {
        // Every 10th receipt carries 16 KiB of output, so the byte bound binds before the count does.
        pybox::proto::Receipt receipt = receipt_of_run(n, n % 10 == 0 ? 16 * 1024 : 3);
        REQUIRE_FALSE(store.issue(receipt, 1001).not_kept);
        REQUIRE(files_in(runtime.paths.receipts_dir()) <= bounds.max_receipts);
        REQUIRE(bytes_in(runtime.paths.receipts_dir()) <= bounds.max_bytes);
        REQUIRE(store.kept_bytes() == bytes_in(runtime.paths.receipts_dir()));
        REQUIRE(store.holds(run_id_of(n)));
    }
    const auto list = store.list(std::nullopt);
    REQUIRE(!list->receipts.empty());
    // What is kept is the newest, without gaps: the oldest went first.
    for (std::size_t i = 0; i < list->receipts.size(); ++i)
        CHECK(list->receipts[i].run_id == run_id_of(1000 - static_cast<int>(i)));
    CHECK_FALSE(store.holds(run_id_of(1000 - static_cast<int>(list->receipts.size()))));
    CHECK(list->max_receipts == 100);
    CHECK(list->max_bytes == 400 * 1024);

    ReceiptStore smaller(runtime.paths.receipts_dir(), key_of(runtime.paths), {10, bounds.max_bytes});
    smaller.load();
    CHECK(files_in(runtime.paths.receipts_dir()) == 10);
    CHECK(smaller.holds(run_id_of(1000)));
}

TEST_CASE("The attempts answer links a settled run to its kept receipt")
{
    pybox::test::TempRuntime runtime;
    ReceiptStore store(runtime.paths.receipts_dir(), key_of(runtime.paths));
    pybox::proto::Receipt receipt = receipt_of_run(7);
    REQUIRE_FALSE(store.issue(receipt, 1001).not_kept);
    const pybox::daemon::AttemptJournal journal(runtime.paths);
    for (int n : {7, 8}) {
        pybox::proto::SettledAttempt entry;
        entry.run_id = run_id_of(n);
        entry.created_at = "2026-12-01T00:00:07.000000Z";
        entry.settled_at = "2026-12-01T00:05:00.000000Z";
        entry.owner_uid = 1001;
        REQUIRE(journal.append(entry).has_value());
    }
    pybox::daemon::RunsInProgress in_progress;
    pybox::daemon::JournalAttemptRecords records(pybox::daemon::AttemptLog(runtime.paths), journal, in_progress, &store);
    const auto answer = records.list(std::nullopt);
    REQUIRE(answer.has_value());
    REQUIRE(answer->settled.size() == 2);
    for (const auto& entry : answer->settled)
        CHECK(entry.receipt == (entry.run_id == run_id_of(7) ? std::optional(run_id_of(7)) : std::nullopt));
    const auto written = pybox::proto::to_json(*answer);
    CHECK(pybox::proto::attempts_answer_from_json(written, pybox::util::ReadMode::strict)->settled == answer->settled);
}

TEST_CASE("A receipt whose folder cannot be written is signed, not kept, and its run is told apart from one never issued")
{
    pybox::test::TempRuntime runtime;
    const fs::path folder = runtime.paths.receipts_dir();
    ReceiptStore store(folder, key_of(runtime.paths));
    fs::remove_all(folder);
    REQUIRE(pybox::write_file_atomic(folder, "not a folder").has_value());  // nothing can be written in it

    const auto issuance = store.issue(receipt_of_run(1), 1001);
    REQUIRE(issuance.not_kept.has_value());
    const pybox::Error& issued = *issuance.not_kept;
    CHECK(issuance.receipt.receipt().signature.has_value());
    CHECK_THAT(issued.message, Catch::StartsWith("pyboxd signed the receipt of run " + run_id_of(1) +
                                                         " but could not keep it: ") &&
                                           Catch::Contains("Not a directory"));
    CHECK_FALSE(store.holds(run_id_of(1)));
    CHECK(store.list(std::nullopt)->receipts.empty());

    const auto shown = store.get(run_id_of(1), 1001);
    CHECK(shown.error().code == "no_such_receipt");
    CHECK_THAT(shown.error().message, Catch::StartsWith(issued.message) && !Catch::Contains("never issued"));
    CHECK_THAT(store.get(run_id_of(1), 1002).error().message, Catch::Contains("never issued"));
    CHECK_THAT(store.get(run_id_of(2), 1001).error().message, Catch::Contains("never issued"));
}

namespace {

// A store with runs 1 and 2 kept as uid 1001's, and the text of each kept file.
struct TwoKept {
    pybox::test::TempRuntime runtime;
    ReceiptStore store{runtime.paths.receipts_dir(), key_of(runtime.paths)};

    TwoKept()
    {
        for (int n : {1, 2}) {
            pybox::proto::Receipt receipt = receipt_of_run(n);
            REQUIRE_FALSE(store.issue(receipt, 1001).not_kept);
        }
    }
    fs::path file(int n) const { return runtime.paths.receipts_dir() / (run_id_of(n) + ".json"); }
    json::value kept(int n) const { return json::parse(*pybox::read_file_capped(file(n), 1 << 20)); }
    // Rewrites run n's file in place, as someone with write access to the folder would.
    void overwrite(int n, const json::value& document) const
    {
        REQUIRE(pybox::write_file_atomic(file(n), pybox::util::to_json_text(document)).has_value());
    }
    pybox::proto::KeptReceipt listed(int n)
    {
        const auto list = store.list(std::nullopt);
        for (const auto& entry : list->receipts)
            if (entry.run_id == run_id_of(n)) return entry;
        FAIL("run " << n << " is not listed");
        return {};
    }
};

}  // namespace

TEST_CASE("A kept receipt edited after it was signed is listed as not signed, with why, and is not served")
{
    TwoKept kept;
    auto document = kept.kept(1);
    document.at("receipt").at("observed").at("termination").at("exit_code") = 1;
    kept.overwrite(1, document);

    const auto entry = kept.listed(1);
    CHECK_FALSE(entry.signed_receipt);
    CHECK(entry.exit_code == 1);  // what the file says, marked as not to be trusted
    REQUIRE(entry.problem.has_value());
    CHECK_THAT(*entry.problem, Catch::Contains("signature_mismatch"));
    const auto shown = kept.store.get(run_id_of(1), 1001);
    CHECK(shown.error().code == "receipt_not_verified");
    CHECK_THAT(shown.error().message, Catch::Contains("signature_mismatch") && Catch::Contains(kept.file(1).string()));
    CHECK(kept.listed(2).signed_receipt);
    CHECK(kept.store.get(run_id_of(2), 1001).has_value());
}

TEST_CASE("A kept receipt whose signature was removed is listed as not signed and is not served")
{
    TwoKept kept;
    auto document = kept.kept(1);
    document.at("receipt").as_object().erase("signature");
    kept.overwrite(1, document);

    const auto entry = kept.listed(1);
    CHECK_FALSE(entry.signed_receipt);
    CHECK_THAT(entry.problem.value_or(""), Catch::Contains("not_signed"));
    CHECK(kept.store.get(run_id_of(1), 1001).error().code == "receipt_not_verified");
}

TEST_CASE("Another run's genuine receipt copied over a run's file is listed and refused as that other run's")
{
    TwoKept kept;
    kept.overwrite(1, kept.kept(2));

    const auto entry = kept.listed(1);
    CHECK_FALSE(entry.signed_receipt);
    CHECK_THAT(entry.problem.value_or(""), Catch::Contains("receipt of run " + run_id_of(2) + ", not of run " + run_id_of(1)));
    const auto shown = kept.store.get(run_id_of(1), 1001);
    CHECK(shown.error().code == "receipt_not_verified");
    CHECK_THAT(shown.error().message, Catch::Contains("receipt of run " + run_id_of(2)));

    // A restarted store finds the same.
    ReceiptStore again(kept.runtime.paths.receipts_dir(), key_of(kept.runtime.paths));
    CHECK(again.load() == 0);
    const auto list = again.list(std::nullopt);
    REQUIRE(list->receipts.size() == 2);
    CHECK_FALSE(list->receipts.back().signed_receipt);
    CHECK(again.get(run_id_of(1), 1001).error().code == "receipt_not_verified");
}

TEST_CASE("A kept receipt whose file no longer reads as one stays listed as not signed, and one removed is no longer listed")
{
    TwoKept kept;
    REQUIRE(pybox::write_file_atomic(kept.file(1), "garbage").has_value());
    fs::remove(kept.file(2));

    const auto list = kept.store.list(std::nullopt);
    REQUIRE(list->receipts.size() == 1);
    CHECK(list->receipts.front().run_id == run_id_of(1));
    CHECK_FALSE(list->receipts.front().signed_receipt);
    CHECK_THAT(list->receipts.front().problem.value_or(""), Catch::Contains("no longer reads as a kept receipt"));
    CHECK(list->receipts.front().bytes == 7);
    CHECK(kept.store.kept_bytes() == 7);
    CHECK(kept.store.get(run_id_of(1), 1001).error().code == "file_unreadable");
}
