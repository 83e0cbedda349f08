#include "daemon/reconcile/sweeper.hpp"
#include "daemon/run/attempts.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/temp_runtime.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

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
    daemon::Sweeper sweeper(*f.client, daemon::AttemptLog(runtime.paths), k_owner);

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

TEST_CASE("An unconfirmed run is settled only after its expiry plus 60 s, once its box is gone")
{
    TempRuntime runtime;
    const daemon::AttemptLog attempts(runtime.paths);
    REQUIRE(attempts.write({"11111111111111111111111111111111", k_owner, "2026-01-01T00:00:00Z", now_s() - 61, "c1"}).has_value());
    REQUIRE(attempts.write({"22222222222222222222222222222222", k_owner, "2026-01-01T00:00:00Z", now_s() - 30, "c2"}).has_value());
    EngineFixture f;
    f.engine->answer(http_response("200 OK", "[]"));
    daemon::Sweeper sweeper(*f.client, attempts, k_owner);

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
    daemon::Sweeper sweeper(*f.client, attempts, k_owner);

    const auto summary = f.run(sweeper.sweep_once());
    CHECK(summary.at("engine_reachable") == false);
    CHECK(summary.at("attempts_settled") == 0);
    CHECK(attempts.list().size() == 1);
}
