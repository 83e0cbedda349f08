#include "daemon/reconcile/sweeper.hpp"
#include "daemon/records/attempts.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/temp_runtime.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

using namespace pybox;
using pybox::test::EngineFixture;
using pybox::test::http_response;
using pybox::test::TempRuntime;
namespace json = boost::json;

namespace {

constexpr const char* k_owner = "0123456789abcdef0123456789abcdef";

std::int64_t now_s()
{
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

json::object box(const std::string& id, const std::string& owner, const std::string& run, std::int64_t expires)
{
    return {{"Id", id},
            {"Labels", json::object{{"pybox.owner", owner}, {"pybox.run", run}, {"pybox.expires", std::to_string(expires)}}}};
}

}  // namespace

TEST_CASE("The sweep removes this installation's expired boxes and never touches another owner's")
{
    TempRuntime runtime;
    EngineFixture f;
    const json::array listed{box("foreign", "ffffffffffffffffffffffffffffffff", "r1", now_s() - 1000),
                             box("expired", k_owner, "r2", now_s() - 10), box("young", k_owner, "r3", now_s() + 100)};
    f.engine->answer(http_response("200 OK", json::serialize(listed)));
    f.engine->answer(http_response("204 No Content", ""));
    f.engine->answer(http_response("404 Not Found", R"({"message":"No such container"})"));
    daemon::Sweeper sweeper(*f.boxes, daemon::AttemptLog(runtime.paths), daemon::AttemptJournal(runtime.paths), k_owner);

    const auto summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("boxes_found") == 2);
    CHECK(summary.at("boxes_removed") == 1);
    CHECK(summary.at("boxes_not_yet_expired") == 1);
    REQUIRE(f.engine->requests().size() == 3);
    CHECK(f.engine->requests().at(0).find("GET /containers/json") != std::string::npos);
    CHECK(f.engine->requests().at(1).starts_with("DELETE /containers/expired?force=1&v=1"));
    CHECK(f.engine->requests().at(2).starts_with("GET /containers/expired/json"));
    for (const auto& request : f.engine->requests()) CHECK(request.find("foreign") == std::string::npos);
}

TEST_CASE("An unconfirmed run is settled only after its expiry plus 60 s (the default), once its box is gone")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    REQUIRE(attempts.write({"11111111111111111111111111111111", k_owner, "2026-01-01T00:00:00Z", now_s() - 61, "c1"}).has_value());
    REQUIRE(attempts.write({"22222222222222222222222222222222", k_owner, "2026-01-01T00:00:00Z", now_s() - 30, "c2"}).has_value());
    EngineFixture f;
    f.engine->answer(http_response("200 OK", "[]"));
    daemon::Sweeper sweeper(*f.boxes, attempts, daemon::AttemptJournal(runtime.paths), k_owner);

    const auto summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("attempts_settled") == 1);
    CHECK(summary.at("attempts_unconfirmed") == 1);
    const auto left = attempts.list();
    REQUIRE(left.size() == 1);
    CHECK(left[0].run_id == "22222222222222222222222222222222");
}

TEST_CASE("With the engine unreachable nothing is settled")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    REQUIRE(attempts.write({"11111111111111111111111111111111", k_owner, "2026-01-01T00:00:00Z", now_s() - 1000, "c1"}).has_value());
    EngineFixture f;
    f.engine->answer(http_response("500 Internal Server Error", R"({"message":"down"})"));
    daemon::Sweeper sweeper(*f.boxes, attempts, daemon::AttemptJournal(runtime.paths), k_owner);

    const auto summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("engine_reachable") == false);
    CHECK(summary.at("attempts_settled") == 0);
    CHECK(attempts.list().size() == 1);
}

TEST_CASE("A settled attempt is journaled with what the sweep found and did, then its note is deleted")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    const daemon::AttemptJournal journal(runtime.paths);
    const std::string removed_run(32, '1'), vanished_run(32, '2');
    REQUIRE(attempts.write({removed_run, k_owner, "2026-01-01T00:00:00Z", now_s() - 1, "box-of-1"}).has_value());
    REQUIRE(attempts.write({vanished_run, k_owner, "2026-01-01T00:00:01Z", now_s() - 1, "box-of-2"}).has_value());
    EngineFixture f;
    // The first sweep finds the first run's box expired and removes it; the second settles both.
    f.engine->answer(http_response("200 OK", json::serialize(json::array{box("box-of-1", k_owner, removed_run, now_s() - 1)})));
    f.engine->answer(http_response("204 No Content", ""));
    f.engine->answer(http_response("404 Not Found", R"({"message":"No such container"})"));
    f.engine->answer(http_response("200 OK", "[]"));
    std::vector<std::string> released;
    daemon::Sweeper sweeper(*f.boxes, attempts, journal, k_owner,
                            daemon::SweepSettings{2, nullptr, [&released](const std::string& run_id) -> boost::asio::awaitable<Expected<void>> {
                                released.push_back(run_id);
                                co_return Expected<void>{};
                            }});

    auto summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("boxes_removed") == 1);
    CHECK(summary.at("attempts_settled") == 0);  // expiry + 2 s has not passed
    CHECK(journal.read_recent(10)->entries.empty());

    // Time passes: both runs are now past expiry + 2 s.
    REQUIRE(attempts.write({removed_run, k_owner, "2026-01-01T00:00:00Z", now_s() - 10, "box-of-1"}).has_value());
    REQUIRE(attempts.write({vanished_run, k_owner, "2026-01-01T00:00:01Z", now_s() - 10, "box-of-2"}).has_value());
    summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("attempts_settled") == 2);
    CHECK(attempts.list().empty());
    CHECK(released.size() == 2);
    const auto reading = journal.read_recent(10);
    REQUIRE(reading.has_value());
    REQUIRE(reading->entries.size() == 2);
    for (const auto& entry : reading->entries) {
        CHECK(entry.run_parent_released);
        CHECK_FALSE(entry.settled_at.empty());
        if (entry.run_id == removed_run) {
            CHECK(entry.box == proto::k_box_removed_by_sweep);
            CHECK(entry.box_removed_at.has_value());
            CHECK(entry.container_id == "box-of-1");
            CHECK(entry.created_at == "2026-01-01T00:00:00Z");
        } else {
            CHECK(entry.run_id == vanished_run);
            CHECK(entry.box == proto::k_box_not_found);
            CHECK_FALSE(entry.box_removed_at.has_value());
        }
    }
}

TEST_CASE("A run in progress keeps its box and its note, whatever its expiry says")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    const std::string running(32, 'a');
    REQUIRE(attempts.write({running, k_owner, "2026-01-01T00:00:00Z", now_s() - 1000, "live"}).has_value());
    daemon::RunsInProgress in_progress;
    const daemon::RunsInProgress::Mark mark(&in_progress, running);
    EngineFixture f;
    f.engine->answer(http_response("200 OK", json::serialize(json::array{box("live", k_owner, running, now_s() - 1000)})));
    daemon::Sweeper sweeper(*f.boxes, attempts, daemon::AttemptJournal(runtime.paths), k_owner,
                            daemon::SweepSettings{0, &in_progress, {}});

    const auto summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("boxes_in_progress") == 1);
    CHECK(summary.at("boxes_removed") == 0);
    CHECK(summary.at("attempts_settled") == 0);
    CHECK(f.engine->requests().size() == 1);  // only the list: no delete
    CHECK(attempts.list().size() == 1);
}

TEST_CASE("A journal that cannot be written keeps the note; the entry written later names the failure")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    const daemon::AttemptJournal journal(runtime.paths);
    const std::string run(32, 'b');
    REQUIRE(attempts.write({run, k_owner, "2026-01-01T00:00:00Z", now_s() - 100, ""}).has_value());
    // A folder where the journal file should be: no append can succeed, whoever runs the test.
    std::filesystem::create_directories(journal.current_file());
    EngineFixture f;
    f.engine->answer(http_response("200 OK", "[]"));
    f.engine->answer(http_response("200 OK", "[]"));
    daemon::Sweeper sweeper(*f.boxes, attempts, journal, k_owner, daemon::SweepSettings{0, nullptr, {}});

    auto summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("attempts_settled") == 0);
    CHECK(summary.at("attempts_unconfirmed") == 1);
    REQUIRE(summary.at("errors").as_array().size() == 1);
    CHECK_THAT(std::string(summary.at("errors").as_array()[0].as_string()), Catch::Contains("journal.jsonl"));
    CHECK(attempts.list().size() == 1);

    std::filesystem::remove(journal.current_file());
    summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("attempts_settled") == 1);
    const auto reading = journal.read_recent(10);
    REQUIRE(reading.has_value());
    REQUIRE(reading->entries.size() == 1);
    REQUIRE(reading->entries[0].errors.size() == 1);
    CHECK_THAT(reading->entries[0].errors[0], Catch::Contains("journal.jsonl"));
    CHECK_FALSE(reading->entries[0].run_parent_released);
}
