// The attempt journal (daemon/records/attempt_journal.hpp) and its entries (proto/attempts.hpp):
// append and read back, rotation and its bounds, damaged and cut lines, a journal that cannot be
// written, and the strict reader of one entry.
#include "daemon/records/attempt_journal.hpp"
#include "daemon/records/attempt_records.hpp"
#include "proto/attempts.hpp"
#include "tests/support/temp_runtime.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace pybox;
using pybox::test::TempRuntime;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// A run ID made of one hex digit repeated, or of a number.
std::string run_id(std::size_t n)
{
    std::string id = std::to_string(n);
    return std::string(32 - id.size(), '0') + id;
}

proto::SettledAttempt entry(std::size_t n)
{
    proto::SettledAttempt attempt;
    attempt.run_id = run_id(n);
    attempt.created_at = "2026-12-01T03:00:00Z";
    attempt.expires_at = 1764558120;
    attempt.container_id = std::string(64, 'c');
    attempt.settled_at = "2026-12-01T03:03:00Z";
    attempt.box = proto::k_box_removed_by_sweep;
    attempt.box_removed_at = "2026-12-01T03:02:00Z";
    attempt.run_parent_released = true;
    return attempt;
}

void append_raw(const fs::path& file, const std::string& bytes)
{
    std::ofstream out(file, std::ios::binary | std::ios::app);
    out << bytes;
}

}  // namespace

TEST_CASE("An entry reads back exactly; the reader refuses anything else")
{
    auto attempt = entry(1);
    attempt.errors = {"run 00000000: the journal could not be written"};
    const std::string line = json::serialize(proto::to_json(attempt));
    const auto read = proto::parse_settled_attempt(line);
    REQUIRE(read.has_value());
    CHECK(*read == attempt);

    const auto refused = [&](const std::string& key, const json::value& value) {
        auto document = proto::to_json(attempt);
        if (value.is_null() && key != "box_removed_at") {
            document.erase(key);
        } else {
            document[key] = value;
        }
        const auto result = proto::settled_attempt_from_json(document);
        INFO(key << " = " << json::serialize(value));
        REQUIRE_FALSE(result.has_value());
        CHECK(result.error().code == "invalid_attempt");
    };
    refused("run_id", "0123");
    refused("run_id", json::value(std::string(32, 'G')));
    refused("box", "GONE");
    refused("expires_at", "soon");
    refused("run_parent_released", 1);
    refused("errors", json::array(9, "e"));
    refused("errors", json::array{json::value(std::string(257, 'e'))});
    refused("created_at", json::value(std::string(129, 't')));
    refused("extra", 1);
    refused("settled_at", nullptr);  // missing
    refused("owner_uid", -1);
    refused("owner_uid", 4294967296);
    refused("owner_uid", "1000");
    CHECK_FALSE(proto::parse_settled_attempt(line.substr(0, line.size() - 1)).has_value());
    CHECK_FALSE(proto::parse_settled_attempt("[" + line + "]").has_value());
}

TEST_CASE("Appended entries read back newest first, bounded by the count asked for")
{
    TempRuntime runtime;
    const daemon::AttemptJournal journal(runtime.paths);
    CHECK(journal.read_recent(10)->entries.empty());  // no file yet
    for (std::size_t i = 1; i <= 5; ++i) REQUIRE(journal.append(entry(i)).has_value());
    const auto reading = journal.read_recent(3);
    REQUIRE(reading.has_value());
    REQUIRE(reading->entries.size() == 3);
    CHECK(reading->entries[0].run_id == run_id(5));
    CHECK(reading->entries[2].run_id == run_id(3));
    CHECK(reading->damaged_lines == 0);
    CHECK((fs::status(journal.current_file()).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("The journal rotates before it would pass its size; one older file is kept")
{
    TempRuntime runtime;
    const std::size_t line_bytes = json::serialize(proto::to_json(entry(1))).size() + 1;
    const std::size_t max_bytes = line_bytes * 4 + 10;  // four entries per file
    const daemon::AttemptJournal journal(runtime.paths, max_bytes);
    for (std::size_t i = 1; i <= 11; ++i) {
        REQUIRE(journal.append(entry(i)).has_value());
        CHECK(fs::file_size(journal.current_file()) <= max_bytes);
    }
    // 1-4 went to journal.1.jsonl, then 5-8 replaced them there; 9-11 are in journal.jsonl.
    CHECK(fs::file_size(journal.previous_file()) == line_bytes * 4);
    CHECK(fs::file_size(journal.current_file()) == line_bytes * 3);
    std::size_t files = 0;
    for (const auto& item : fs::directory_iterator(runtime.paths.attempts_dir()))
        if (item.path().filename().string().starts_with("journal")) ++files;
    CHECK(files == 2);
    const auto reading = journal.read_recent(100);
    REQUIRE(reading.has_value());
    REQUIRE(reading->entries.size() == 7);
    CHECK(reading->entries.front().run_id == run_id(11));
    CHECK(reading->entries.back().run_id == run_id(5));
}

TEST_CASE("Damaged lines are counted and skipped; a line a crash cut stays apart from the next entry")
{
    TempRuntime runtime;
    const daemon::AttemptJournal journal(runtime.paths);
    REQUIRE(journal.append(entry(1)).has_value());
    append_raw(journal.current_file(), "not json\n{\"run_id\":\"x\"}\n");
    const std::string whole = json::serialize(proto::to_json(entry(2)));
    append_raw(journal.current_file(), whole.substr(0, whole.size() / 2));  // no newline: cut by a crash
    REQUIRE(journal.append(entry(3)).has_value());
    const auto reading = journal.read_recent(10);
    REQUIRE(reading.has_value());
    CHECK(reading->damaged_lines == 3);
    REQUIRE(reading->entries.size() == 2);
    CHECK(reading->entries[0].run_id == run_id(3));
    CHECK(reading->entries[1].run_id == run_id(1));
}

TEST_CASE("A journal file larger than its bound is read from its end only")
{
    TempRuntime runtime;
    const std::size_t line_bytes = json::serialize(proto::to_json(entry(1))).size() + 1;
    const daemon::AttemptJournal journal(runtime.paths, line_bytes * 2 + line_bytes / 2);
    for (std::size_t i = 1; i <= 4; ++i)
        append_raw(journal.current_file(), json::serialize(proto::to_json(entry(i))) + "\n");  // grown by hand
    const auto reading = journal.read_recent(10);
    REQUIRE(reading.has_value());
    CHECK(reading->damaged_lines == 1);  // the line the bound cut
    REQUIRE(reading->entries.size() == 2);
    CHECK(reading->entries[0].run_id == run_id(4));
    CHECK(reading->entries[1].run_id == run_id(3));
}

TEST_CASE("A journal that cannot be written fails with a clear error and writes nothing")
{
    TempRuntime runtime;
    const daemon::AttemptJournal journal(runtime.paths);
    fs::remove_all(runtime.paths.attempts_dir());
    const auto appended = journal.append(entry(1));
    REQUIRE_FALSE(appended.has_value());
    CHECK(appended.error().code == "file_unwritable");
    CHECK_THAT(appended.error().message, Catch::Contains(journal.current_file().string()));
    CHECK_FALSE(fs::exists(journal.current_file()));
}

TEST_CASE("GET /v1/attempts lists the unsettled notes, newest first, and the settled entries")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    const daemon::AttemptJournal journal(runtime.paths);
    REQUIRE(attempts.write({run_id(1), "owner", "2026-12-01T03:00:00Z", 1764558120, ""}).has_value());
    REQUIRE(attempts.write({run_id(2), "owner", "2026-12-01T03:00:05Z", 1764558125, "c2"}).has_value());
    append_raw(runtime.paths.attempts_dir() / (run_id(3) + ".json"), "{damaged");
    REQUIRE(journal.append(entry(4)).has_value());
    append_raw(journal.current_file(), "damaged\n");
    daemon::RunsInProgress in_progress;
    const daemon::RunsInProgress::Mark mark(&in_progress, run_id(2));
    daemon::JournalAttemptRecords records(attempts, journal, in_progress);

    const auto answer = records.list(std::nullopt);
    REQUIRE(answer.has_value());
    const auto& unsettled = answer->unsettled;
    REQUIRE(unsettled.size() == 3);
    CHECK(unsettled[0].run_id == run_id(2));
    CHECK(unsettled[0].in_progress);
    CHECK(unsettled[1].run_id == run_id(1));
    CHECK_FALSE(unsettled[1].in_progress);
    CHECK_FALSE(unsettled[2].readable);
    CHECK(answer->unsettled_total == 3);
    REQUIRE(answer->settled.size() == 1);
    CHECK(answer->settled[0].run_id == run_id(4));
    CHECK(answer->damaged_lines == 1);
}

TEST_CASE("A warm box's note is listed as warm and in progress until a run takes it")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    const daemon::AttemptJournal journal(runtime.paths);
    REQUIRE(attempts.write({run_id(1), "owner", "2026-12-01T03:00:00Z", 1764558120, "c1"}).has_value());
    daemon::RunsInProgress in_progress;
    daemon::RunsInProgress::Mark mark(&in_progress, run_id(1), daemon::RunsInProgress::State::warm);
    daemon::JournalAttemptRecords records(attempts, journal, in_progress);
    auto answer = records.list(std::nullopt);
    REQUIRE(answer.has_value());
    REQUIRE(answer->unsettled.size() == 1);
    CHECK(answer->unsettled[0].in_progress);
    CHECK(answer->unsettled[0].warm);
    mark.taken();
    answer = records.list(std::nullopt);
    REQUIRE(answer.has_value());
    CHECK(answer->unsettled[0].in_progress);
    CHECK_FALSE(answer->unsettled[0].warm);
}

TEST_CASE("An entry's owner reads back, and an entry written before owners were kept reads as nobody's")
{
    auto attempt = entry(1);
    attempt.owner_uid = 1000;
    const auto read = proto::parse_settled_attempt(json::serialize(proto::to_json(attempt)));
    REQUIRE(read.has_value());
    CHECK(read->owner_uid == std::optional<std::uint32_t>(1000));
    const auto older = proto::parse_settled_attempt(json::serialize(proto::to_json(entry(2))));
    REQUIRE(older.has_value());
    CHECK_FALSE(older->owner_uid.has_value());
    CHECK_FALSE(proto::to_json(entry(2)).contains("owner_uid"));
}

TEST_CASE("A viewer sees only its own notes and entries; without a viewer every run is listed")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    const daemon::AttemptJournal journal(runtime.paths);
    daemon::AttemptNote alices{run_id(1), "owner", "2026-12-01T03:00:00Z", 1764558120, "c1"};
    alices.owner_uid = 1001;
    daemon::AttemptNote bobs{run_id(2), "owner", "2026-12-01T03:00:05Z", 1764558125, "c2"};
    bobs.owner_uid = 1002;
    const daemon::AttemptNote nobodys{run_id(3), "owner", "2026-12-01T03:00:09Z", 1764558129, "c3"};
    for (const auto& note : {alices, bobs, nobodys}) REQUIRE(attempts.write(note).has_value());
    auto settled_alice = entry(4);
    settled_alice.owner_uid = 1001;
    REQUIRE(journal.append(settled_alice).has_value());
    REQUIRE(journal.append(entry(5)).has_value());  // an entry from before owners were kept
    daemon::RunsInProgress in_progress;
    daemon::JournalAttemptRecords records(attempts, journal, in_progress);

    const auto alice = records.list(1001);
    REQUIRE(alice.has_value());
    REQUIRE(alice->unsettled.size() == 1);
    CHECK(alice->unsettled[0].run_id == run_id(1));
    CHECK(alice->unsettled[0].owner_uid == std::optional<std::uint32_t>(1001));
    CHECK(alice->unsettled_total == 1);
    REQUIRE(alice->settled.size() == 1);
    CHECK(alice->settled[0].run_id == run_id(4));
    const auto bob = records.list(1002);
    REQUIRE(bob.has_value());
    REQUIRE(bob->unsettled.size() == 1);
    CHECK(bob->unsettled[0].run_id == run_id(2));
    CHECK(bob->settled.empty());
    const auto everyone = records.list(std::nullopt);
    REQUIRE(everyone.has_value());
    CHECK(everyone->unsettled.size() == 3);
    CHECK(everyone->settled.size() == 2);
    // The note keeps its owner on disk.
    const auto listed = attempts.list();
    CHECK(std::ranges::count_if(listed, [](const daemon::AttemptNote& n) { return n.owner_uid == 1001u; }) == 1);
}
