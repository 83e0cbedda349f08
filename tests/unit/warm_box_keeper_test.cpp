// WarmBoxKeeper: making, holding, handing out and removing warm boxes, each a real BoxRun on a
// FakeBoxEngine of its own (the fake holds one box), made by a MakeBox that can be slowed down
// or made to fail.
#include "daemon/run/warm_box_keeper.hpp"

#include "tests/support/fake_box_engine.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/temp_runtime.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <catch2/catch.hpp>

#include <deque>

using namespace pybox;
using namespace std::chrono_literals;
using daemon::BoxRun;
using test::FakeBoxEngine;
namespace net = boost::asio;

namespace {

constexpr std::uint32_t k_owner = 1000;
constexpr const char* k_installation = "0123456789abcdef0123456789abcdef";

struct Fixture {
    test::TempRuntime runtime;
    daemon::AttemptTracking attempts{daemon::AttemptLog(runtime.paths)};
    daemon::WatchSetup watch;
    net::io_context io;
    daemon::RunQueue queue{io.get_executor()};
    std::deque<std::unique_ptr<FakeBoxEngine>> engines;  // one per box made, in order
    daemon::VerifiedImage image{"sha256:" + std::string(64, 'a'), std::string(64, 'b')};
    int failures_left = 0;  // makings that fail (their start refused) before one succeeds
    std::chrono::milliseconds making_takes{0};
    std::optional<daemon::WarmBoxKeeper> keeper;
    bool keeping = false;

    explicit Fixture(int count, std::int64_t box_expiry_s = limits::k_box_expiry_s)
    {
        keeper.emplace(io.get_executor(), daemon::WarmSetup{count, k_owner}, box_expiry_s, queue,
                       [this](std::string name, std::uint32_t owner_uid) { return make(std::move(name), owner_uid); });
    }

    ~Fixture()
    {
        net::co_spawn(io, keeper->stop(), net::detached);
        io.run_for(100ms);  // with the boxes given up, removed in coroutines of their own
    }

    net::awaitable<Expected<std::unique_ptr<BoxRun>>> make(std::string name, std::uint32_t owner_uid)
    {
        if (making_takes > 0ms) {
            net::steady_timer delay(io, making_takes);
            co_await delay.async_wait(net::use_awaitable);
        }
        auto& engine = *engines.emplace_back(std::make_unique<FakeBoxEngine>(io));
        engine.program.until_killed = true;  // the warm box's first process waits for its program
        if (failures_left > 0) {
            --failures_left;
            engine.fail("start", "engine_error");
        }
        proto::RunRequest placeholder;
        placeholder.image = name;
        auto box = std::make_unique<BoxRun>(io.get_executor(), engine, engine, attempts, std::move(placeholder),
                                            *proto::policy_for_image(name), watch,
                                            daemon::BoxKind::warm);
        box->identify(k_installation, owner_uid, image);
        if (auto noted = box->write_attempt(); !noted) co_return noted.error();
        const bool ready = co_await box->prepare();
        if (!ready) co_return make_error("warm_box_failed", "the box could not be prepared");
        co_return std::move(box);
    }

    void keep()
    {
        keeping = true;
        net::co_spawn(io, keeper->keep(), [this](std::exception_ptr) { keeping = false; });
        io.run_for(50ms);
    }

    std::unique_ptr<BoxRun> take(const proto::RunRequest& request, std::uint32_t owner_uid = k_owner)
    {
        return test::run_to_result(io, keeper->take(request, owner_uid, image));
    }

    // The boxes that exist now.
    int alive() const
    {
        int count = 0;
        for (const auto& engine : engines) count += engine->box_exists() ? 1 : 0;
        return count;
    }

    void discard(std::unique_ptr<BoxRun> box) { test::run_to_end(io, box->discard()); }
};

proto::RunRequest request(std::string image = "stdlib")
{
    proto::RunRequest run;
    run.image = std::move(image);
    run.source = "print(6*7)\n";
    run.timeout_s = 2.0;
    return run;
}

}  // namespace

TEST_CASE("With no warm boxes to keep, the keeper returns at once and hands out none")
{
    Fixture f(0);
    test::run_to_end(f.io, f.keeper->keep());
    CHECK(f.engines.empty());
    CHECK(f.take(request()) == nullptr);
}

TEST_CASE("A box expiry too short for a box to wait and still take the longest run keeps no warm boxes")
{
    Fixture f(1, limits::k_warm_box_renewed_before_expiry_s + limits::k_min_warm_box_wait_s - 1);
    test::run_to_end(f.io, f.keeper->keep());
    CHECK(f.engines.empty());
}

TEST_CASE("The keeper makes as many boxes as asked, each started and waiting for its program")
{
    Fixture f(2);
    f.keep();
    REQUIRE(f.engines.size() == 2);
    CHECK(f.alive() == 2);
    for (const auto& engine : f.engines) {
        CHECK(engine->count("start") == 1);
        CHECK(engine->spec().command == proto::warm_box_command());
    }
}

TEST_CASE("Each box is handed out once: two runs take the two boxes, a third runs cold")
{
    Fixture f(2);
    f.keep();
    auto first = f.take(request());
    auto second = f.take(request());
    REQUIRE(first != nullptr);
    REQUIRE(second != nullptr);
    CHECK(first.get() != second.get());
    CHECK(f.take(request()) == nullptr);
    CHECK(f.keeper->in_series());  // it found none ready: the next box is begun beside it
    f.discard(std::move(first));
    f.discard(std::move(second));
}

TEST_CASE("A run of another image, with files, or of another user gets no box, and the box stays")
{
    Fixture f(1);
    f.keep();
    CHECK(f.take(request("data")) == nullptr);
    auto with_files = request();
    with_files.files = proto::RunRequest::Files{};
    CHECK(f.take(with_files) == nullptr);
    CHECK_FALSE(f.keeper->in_series());
    CHECK(f.take(request(), k_owner + 1) == nullptr);
    CHECK(f.alive() == 1);
    auto box = f.take(request());
    CHECK(box != nullptr);
    f.discard(std::move(box));
}

TEST_CASE("A box of an image rebuilt since it was made is removed, not handed out")
{
    Fixture f(1);
    f.keep();
    f.image.image_id = "sha256:" + std::string(64, 'f');  // what the image check finds now
    CHECK(f.take(request()) == nullptr);
    f.io.run_for(50ms);
    CHECK_FALSE(f.engines.front()->box_exists());
}

TEST_CASE("A box whose settings no longer check out when a run comes is removed, not handed out")
{
    Fixture f(1);
    f.keep();
    f.engines.front()->mismatches = {engine::SettingMismatch{"HostConfig.Memory", "134217728", "0"}};
    CHECK(f.take(request()) == nullptr);
    f.io.run_for(50ms);
    CHECK_FALSE(f.engines.front()->box_exists());
}

TEST_CASE("A run waits for the box being made for its image, and takes it once it is ready")
{
    Fixture f(1);
    f.making_takes = 200ms;
    f.keep();  // the making is under way
    REQUIRE(f.engines.empty());
    auto box = f.take(request());
    REQUIRE(box != nullptr);
    CHECK(f.engines.size() == 1);
    CHECK(box->waiting_for() < 100ms);
    f.discard(std::move(box));
}

TEST_CASE("A box that could not be made is tried again, at once when the keeper is woken")
{
    Fixture f(1);
    f.failures_left = 1;
    f.keep();
    REQUIRE(f.engines.size() == 1);
    CHECK(f.alive() == 0);  // its start failed, so it was removed
    CHECK(f.take(request()) == nullptr);
    f.keeper->wake();
    f.io.run_for(50ms);
    REQUIRE(f.engines.size() == 2);
    CHECK(f.alive() == 1);
    auto box = f.take(request());
    CHECK(box != nullptr);
    f.discard(std::move(box));
}

TEST_CASE("While a run holds its turn no box is made, until the keeper is woken after it")
{
    Fixture f(1);
    std::optional<daemon::RunQueue::Turn> turn;
    net::co_spawn(
        f.io,
        [&]() -> net::awaitable<void> {
            auto granted = co_await f.queue.wait_turn(k_owner, {});
            if (granted) turn.emplace(std::move(*granted));
        },
        net::detached);
    f.keep();
    REQUIRE(turn);
    CHECK(f.engines.empty());
    turn.reset();
    f.keeper->wake();
    f.io.run_for(50ms);
    CHECK(f.alive() == 1);
}

TEST_CASE("Pausing removes the boxes and makes none until resumed; runs meanwhile go cold")
{
    Fixture f(1);
    f.keep();
    REQUIRE(f.alive() == 1);
    test::run_to_end(f.io, f.keeper->pause());
    CHECK(f.alive() == 0);
    CHECK(f.take(request()) == nullptr);
    f.keeper->wake();
    f.io.run_for(50ms);
    CHECK(f.engines.size() == 1);
    f.keeper->resume();
    f.io.run_for(50ms);
    CHECK(f.engines.size() == 2);
    CHECK(f.alive() == 1);
}

TEST_CASE("When runs of another image come, the boxes of the old one go and one of the new is made")
{
    Fixture f(1);
    f.keep();
    REQUIRE(f.alive() == 1);
    f.keeper->want("data");
    f.keeper->wake();
    f.io.run_for(50ms);
    REQUIRE(f.engines.size() == 2);
    CHECK_FALSE(f.engines.front()->box_exists());
    CHECK(f.engines.back()->box_exists());
    CHECK(f.engines.back()->spec().policy.memory_bytes == proto::policy_for_image("data")->memory_bytes);
}

TEST_CASE("A box is replaced before its expiry label, so no run takes a box about to be swept")
{
    Fixture f(1);
    // Boxes labelled to expire 2 s after they are made are due for renewal 1-2 s after it (the
    // label counts whole seconds), and their replacements not before 3 s.
    f.attempts.box_expiry_s = limits::k_warm_box_renewed_before_expiry_s + 2;
    f.keep();
    REQUIRE(f.engines.size() == 1);
    f.io.run_for(2'500ms);
    REQUIRE(f.engines.size() == 2);
    CHECK_FALSE(f.engines.front()->box_exists());
    CHECK(f.engines.back()->box_exists());
}

TEST_CASE("Stopping ends the keeping and removes every box held")
{
    Fixture f(2);
    f.keep();
    REQUIRE(f.alive() == 2);
    test::run_to_end(f.io, f.keeper->stop());
    f.io.run_for(50ms);
    CHECK(f.alive() == 0);
    CHECK_FALSE(f.keeping);
}
