// remove_boxes (daemon/run/box_removal.hpp) against the BoxEngine fake: the whole cleanup's
// budget, and the retry after an interruption with a budget of its own (the seed's Time table:
// "15 s (one retry after an interruption gets another 15 s)"). The budgets here are short
// stand-ins for limits::k_cleanup_budget, with the same rule.
#include "daemon/run/box_removal.hpp"

#include "tests/support/fake_box_engine.hpp"
#include "tests/support/fake_engine.hpp"

#include <catch2/catch.hpp>

using namespace pybox;
using namespace std::chrono_literals;
using test::FakeBoxEngine;
namespace net = boost::asio;

namespace {

struct RemovalFixture {
    net::io_context io;
    FakeBoxEngine engine{io};

    RemovalFixture()
    {
        engine::BoxSpec spec;
        test::run_to_result(io, engine.create_box(spec, 1s));
    }

    daemon::RemovalOutcome remove(std::chrono::milliseconds budget)
    {
        const std::vector<std::string> ids{FakeBoxEngine::k_box_id};
        return test::run_to_result(io, daemon::remove_boxes(engine, ids, budget));
    }
};

}  // namespace

TEST_CASE("a box removed and confirmed gone at the first attempt needs no retry", "[box_removal]")
{
    RemovalFixture fixture;
    const auto outcome = fixture.remove(200ms);
    CHECK(outcome.all_gone);
    CHECK(outcome.attempts == 1);
    CHECK_FALSE(outcome.error);
    CHECK_FALSE(fixture.engine.box_exists());
}

TEST_CASE("a failed removal is retried once, and a second failure leaves the box unconfirmed", "[box_removal]")
{
    RemovalFixture fixture;
    fixture.engine.fail("remove", "engine_unreachable", 2);
    const auto outcome = fixture.remove(200ms);
    CHECK_FALSE(outcome.all_gone);
    CHECK(outcome.attempts == 2);
    REQUIRE(outcome.error);
    CHECK(fixture.engine.count("remove") == 2);
}

TEST_CASE("the retry after an interruption gets a budget of its own, not what the first attempt left",
          "[box_removal]")
{
    RemovalFixture fixture;
    // The first delete answers only after the whole budget has passed, and with a timeout: a
    // retry inside the same budget would never be tried.
    fixture.engine.slow("remove", 150ms);
    fixture.engine.fail("remove", "engine_timeout", 1);
    const auto started = std::chrono::steady_clock::now();
    const auto outcome = fixture.remove(100ms);
    CHECK(std::chrono::steady_clock::now() - started >= 150ms);
    CHECK(outcome.all_gone);
    CHECK(outcome.attempts == 2);
    CHECK_FALSE(outcome.error);
    CHECK_FALSE(fixture.engine.box_exists());
}

TEST_CASE("the retry is one: a box not confirmed gone within two budgets stays unconfirmed", "[box_removal]")
{
    RemovalFixture fixture;
    fixture.engine.slow("remove", 150ms, 2);
    fixture.engine.fail("remove", "engine_timeout", 2);
    const auto outcome = fixture.remove(100ms);
    CHECK_FALSE(outcome.all_gone);
    CHECK(outcome.attempts == 2);
    CHECK(outcome.timed_out);
    CHECK(fixture.engine.box_exists());
}
