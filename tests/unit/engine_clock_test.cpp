#include "daemon/engine/engine_clock.hpp"
#include "daemon/engine/docker_facts.hpp"

#include "common/clock.hpp"

#include <catch2/catch.hpp>

using namespace pybox;
namespace json = boost::json;

TEST_CASE("The engine clock offset is SystemTime minus the daemon's readings after and before GET /info")
{
    const std::int64_t system_ns = *parse_rfc3339_ns("2026-11-29T20:00:05.000001000Z");
    const json::value info = json::object{{"SystemTime", "2026-11-29T20:00:05.000001Z"}};
    const auto offset = engine::engine_clock_offset(system_ns - 3'000, engine::docker_engine_info(info), system_ns + 500);
    REQUIRE(offset.has_value());
    CHECK(offset->min_ns == -500);
    CHECK(offset->max_ns == 3'000);
}

TEST_CASE("An engine SystemTime in local time with a zone offset measures the same offset")
{
    const std::int64_t system_ns = *parse_rfc3339_ns("2026-11-29T20:00:05.25Z");
    const json::value info = json::object{{"SystemTime", "2026-11-29T21:00:05.25+01:00"}};
    const auto offset = engine::engine_clock_offset(system_ns - 10, engine::docker_engine_info(info), system_ns + 10);
    REQUIRE(offset.has_value());
    CHECK(offset->min_ns == -10);
    CHECK(offset->max_ns == 10);
}

TEST_CASE("Without a readable SystemTime the engine clock offset is not measured")
{
    CHECK(engine::engine_clock_offset(0, engine::docker_engine_info(json::object{}), 1).error().code == "clock_unmeasured");
    CHECK_FALSE(engine::engine_clock_offset(0, engine::docker_engine_info(json::object{{"SystemTime", "yesterday"}}), 1).has_value());
}

TEST_CASE("A daemon clock that went backwards during GET /info measures no offset")
{
    const json::value info = json::object{{"SystemTime", "2026-11-29T20:00:05Z"}};
    CHECK_FALSE(engine::engine_clock_offset(100, engine::docker_engine_info(info), 50).has_value());
}
