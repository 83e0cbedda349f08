// The pool of engines (daemon/pool): which engine a run goes to, how busy and lost engines are
// counted, and how the pooled run service delegates, skips a lost engine and says why none is left.
#include "daemon/pool/engine_pool.hpp"
#include "daemon/pool/pooled_run_service.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/valid_request.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <deque>
#include <optional>

using namespace pybox;
using daemon::choose_engine;
using daemon::EngineLoad;
using daemon::EnginePool;
namespace net = boost::asio;

namespace {

EnginePool two_engine_pool(bool local_takes_runs = true)
{
    return EnginePool({{"local", "unix:///r/engine/docker.sock", local_takes_runs}, {"e2", "unix:///e2.sock", true}});
}

proto::EngineStatus passed_check()
{
    proto::EngineStatus status;
    status.running = true;
    status.verified = true;
    status.api_version = "1.41";
    return status;
}

// An engine's run service that answers from a script: each call takes the next answer, after `delay`.
class ScriptedRuns final : public daemon::EngineRunService {
public:
    explicit ScriptedRuns(std::string engine_id) : m_engine_id(std::move(engine_id)) {}
    std::deque<Expected<daemon::AssembledRun>> answers;
    std::chrono::milliseconds delay{0};
    int calls = 0;

    net::awaitable<Expected<daemon::AssembledRun>> run(proto::ValidRunRequest, std::uint32_t, net::cancellation_slot,
                                                       daemon::RunObserver*) override
    {
        ++calls;
        if (delay.count() > 0) {
            net::steady_timer timer(co_await net::this_coro::executor, delay);
            co_await timer.async_wait(net::use_awaitable);
        }
        if (answers.empty()) {
            auto receipt = test::sample_receipt();
            receipt.engine = proto::EngineRef{m_engine_id, "unix:///x"};
            co_return daemon::AssembledRun{receipt, {}, false};
        }
        auto answer = std::move(answers.front());
        answers.pop_front();
        co_return answer;
    }

private:
    std::string m_engine_id;
};

// Runs one request through `service` to the end and returns its answer.
Expected<daemon::AssembledRun> run_one(daemon::EngineRunService& service)
{
    net::io_context io;
    std::optional<Expected<daemon::AssembledRun>> answer;
    net::co_spawn(io, service.run(test::valid_request("print(1)"), 0, net::cancellation_slot(), nullptr),
                  [&](std::exception_ptr error, Expected<daemon::AssembledRun> result) {
                      if (error) std::rethrow_exception(error);
                      answer = std::move(result);
                  });
    io.run();
    REQUIRE(answer.has_value());
    return std::move(*answer);
}

}  // namespace

TEST_CASE("A run goes to the verified engine with the fewest runs, ties to the first in config order")
{
    CHECK(choose_engine({{true, true, 0}, {true, true, 0}}) == 0u);
    CHECK(choose_engine({{true, true, 1}, {true, true, 0}}) == 1u);
    CHECK(choose_engine({{true, true, 2}, {true, true, 1}, {true, true, 1}}) == 1u);
    CHECK(choose_engine({{true, true, 3}, {true, true, 3}}) == 0u);
}

TEST_CASE("An engine that runs several at once is chosen while it has room: runs per place, not runs")
{
    // A cluster of 8 places with 3 runs has room; the idle Docker engine is still less busy.
    CHECK(choose_engine({{true, true, 3, 8}, {true, true, 0, 1}}) == 1u);
    // Once the Docker engine runs one, the cluster with room takes the next.
    CHECK(choose_engine({{true, true, 1, 1}, {true, true, 3, 8}}) == 1u);
    CHECK(choose_engine({{true, true, 7, 8}, {true, true, 1, 1}}) == 0u);
    // A full cluster queues behind its places as an engine does behind its one.
    CHECK(choose_engine({{true, true, 8, 8}, {true, true, 1, 1}}) == 0u);
    CHECK(choose_engine({{true, true, 9, 8}, {true, true, 1, 1}}) == 1u);
}

TEST_CASE("An engine that is not verified or takes no runs is never chosen, however idle")
{
    CHECK(choose_engine({{false, true, 0}, {true, true, 5}}) == 1u);
    CHECK(choose_engine({{true, false, 0}, {true, true, 5}}) == 1u);
    CHECK_FALSE(choose_engine({{false, true, 0}, {true, false, 0}}).has_value());
    CHECK_FALSE(choose_engine({}).has_value());
}

TEST_CASE("A new pool has no verified engine until a check passes, and says so")
{
    auto pool = two_engine_pool();
    CHECK_FALSE(pool.choose().has_value());
    CHECK_THAT(pool.why_none(), Catch::Contains("e2 (unix:///e2.sock): Not checked yet"));
    pool.record_check(1, passed_check());
    CHECK(pool.choose() == 1u);
}

TEST_CASE("Busy counts the runs on an engine for as long as they hold it")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    {
        const EnginePool::Busy first(pool, *pool.choose());
        CHECK(pool.describe()[0].busy == 1);
        CHECK(pool.choose() == 1u);
        const EnginePool::Busy second(pool, *pool.choose());
        CHECK(pool.describe()[1].busy == 1);
        CHECK(pool.choose() == 0u);
    }
    CHECK(pool.describe()[0].busy == 0);
    CHECK(pool.describe()[1].busy == 0);
}

TEST_CASE("A lost engine is skipped with its reason until a check finds it verified again")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    pool.record_lost(0, "connect: No such file or directory");
    const auto described = pool.describe();
    CHECK_FALSE(described[0].verified);
    CHECK_FALSE(described[0].running);
    REQUIRE(described[0].problems.size() == 1);
    CHECK(described[0].problems[0].check == "run");
    CHECK_THAT(described[0].problems[0].message, Catch::Contains("No such file or directory"));
    CHECK(pool.choose() == 1u);
    pool.record_check(0, passed_check());
    CHECK(pool.choose() == 0u);
}

TEST_CASE("With local_engine false every run goes to the other engines")
{
    auto pool = two_engine_pool(false);
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    daemon::PooledRunService service(pool, {&local, &e2});
    for (int i = 0; i < 3; ++i) {
        const auto answer = run_one(service);
        REQUIRE(answer.has_value());
        CHECK(answer->receipt.engine->id == "e2");
    }
    CHECK(local.calls == 0);
    CHECK(pool.describe()[0].takes_runs == false);
}

TEST_CASE("Two runs at once go to two engines")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    local.delay = e2.delay = std::chrono::milliseconds(20);
    daemon::PooledRunService service(pool, {&local, &e2});
    net::io_context io;
    std::vector<std::string> engines;
    for (int i = 0; i < 2; ++i)
        net::co_spawn(io, service.run(test::valid_request("print(1)"), 0, net::cancellation_slot(), nullptr),
                      [&](std::exception_ptr, Expected<daemon::AssembledRun> answer) {
                          REQUIRE(answer.has_value());
                          engines.push_back(answer->receipt.engine->id);
                      });
    io.run();
    CHECK(local.calls == 1);
    CHECK(e2.calls == 1);
    CHECK(pool.describe()[0].busy == 0);
}

TEST_CASE("A run an engine refuses as unreachable goes to the next engine, which is then preferred")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    local.answers.push_back(make_error("engine_unreachable", "connect: Connection refused"));
    daemon::PooledRunService service(pool, {&local, &e2});
    const auto answer = run_one(service);
    REQUIRE(answer.has_value());
    CHECK(answer->receipt.engine->id == "e2");
    CHECK_FALSE(pool.describe()[0].verified);
    CHECK(run_one(service)->receipt.engine->id == "e2");
    CHECK(local.calls == 1);
}

TEST_CASE("Any other refusal is the run's answer and leaves the engine verified")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    local.answers.push_back(make_error("image_not_built", "run pybox setup"));
    daemon::PooledRunService service(pool, {&local, &e2});
    const auto answer = run_one(service);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().code == "image_not_built");
    CHECK(pool.describe()[0].verified);
    CHECK(e2.calls == 0);
}

TEST_CASE("A run whose engine went away mid-run is returned as assembled and its engine skipped afterwards")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    auto lost = test::sample_receipt();
    lost.observed.termination.mechanism = proto::TerminationMechanism::engine_lost;
    local.answers.push_back(daemon::AssembledRun{lost, {}, true});
    daemon::PooledRunService service(pool, {&local, &e2});
    const auto answer = run_one(service);
    REQUIRE(answer.has_value());
    CHECK(answer->receipt == lost);
    CHECK_FALSE(pool.describe()[0].verified);
    CHECK(pool.choose() == 1u);
}

TEST_CASE("The pool decides a lost engine by the run's evidence, not by reading its receipt")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    auto receipt = test::sample_receipt();
    receipt.observed.termination.mechanism = proto::TerminationMechanism::engine_lost;
    local.answers.push_back(daemon::AssembledRun{receipt, {}, false});
    daemon::PooledRunService service(pool, {&local, &e2});
    REQUIRE(run_one(service).has_value());
    CHECK(pool.describe()[0].verified);
}

TEST_CASE("With every engine unreachable the run is refused naming each engine and why")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    local.answers.push_back(make_error("engine_unreachable", "local is gone"));
    e2.answers.push_back(make_error("engine_timeout", "e2 is slow"));
    daemon::PooledRunService service(pool, {&local, &e2});
    const auto answer = run_one(service);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().code == "engine_unreachable");
    CHECK_THAT(answer.error().message, Catch::Contains("local is gone") && Catch::Contains("e2 is slow"));
}

TEST_CASE("A client that goes away while its run is refused as unreachable ends the tries")
{
    auto pool = two_engine_pool();
    pool.record_check(0, passed_check());
    pool.record_check(1, passed_check());
    ScriptedRuns local("local"), e2("e2");
    local.delay = std::chrono::milliseconds(50);
    local.answers.push_back(make_error("engine_unreachable", "connect: Connection refused"));
    daemon::PooledRunService service(pool, {&local, &e2});
    net::io_context io;
    net::cancellation_signal client_gone;
    std::optional<Expected<daemon::AssembledRun>> answer;
    net::co_spawn(io, service.run(test::valid_request("print(1)"), 0, client_gone.slot(), nullptr),
                  [&](std::exception_ptr, Expected<daemon::AssembledRun> result) { answer = std::move(result); });
    net::steady_timer timer(io, std::chrono::milliseconds(10));
    timer.async_wait([&](auto) { client_gone.emit(net::cancellation_type::terminal); });
    io.run();
    REQUIRE(answer.has_value());
    REQUIRE_FALSE(answer->has_value());
    CHECK(answer->error().code == "client_disconnected");
    CHECK(e2.calls == 0);
}
