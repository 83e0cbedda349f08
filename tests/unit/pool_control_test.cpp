// The pool's periodic re-check (daemon/pool/pool_control.hpp): only engines that are not
// verified are checked again, and a re-check never overwrites a check that began after it. And
// what the pool asks of the other engines' backends: the recorded images, from the local
// engine's, before each is checked; the removal of an image.
#include "daemon/pool/pool_control.hpp"
#include "tests/support/fake_engine.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

using namespace pybox;
using namespace std::chrono_literals;
using daemon::EnginePool;
using daemon::EnginePoolControl;
namespace net = boost::asio;

namespace {

proto::EngineStatus status_of(bool verified)
{
    proto::EngineStatus status;
    status.running = verified;
    status.verified = verified;
    if (!verified) status.problems.push_back({"ping", "the engine does not answer"});
    return status;
}

// An engine's checks: status() answers the scripted outcomes in order (the last repeats), each
// after its delay, and counts the calls.
class ScriptedControl final : public daemon::EngineControl {
public:
    explicit ScriptedControl(net::io_context& io) : m_io(io) {}

    void then(bool verified, std::chrono::milliseconds delay = 0ms) { m_outcomes.push_back({verified, delay}); }
    int checks() const { return m_checks; }

    net::awaitable<Expected<proto::EngineStartAnswer>> start() override
    {
        co_return make_error("engine_not_managed", "not in this test");
    }
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override
    {
        co_return make_error("engine_not_managed", "not in this test");
    }
    net::awaitable<proto::EngineStatus> status() override
    {
        ++m_checks;
        const auto outcome = m_outcomes.front();
        if (m_outcomes.size() > 1) m_outcomes.pop_front();
        net::steady_timer timer(m_io, outcome.second);
        co_await timer.async_wait(net::use_awaitable);
        co_return status_of(outcome.first);
    }

private:
    net::io_context& m_io;
    std::deque<std::pair<bool, std::chrono::milliseconds>> m_outcomes;
    int m_checks = 0;
};

// An engine's backend that records what the pool asks of its images; nothing else is asked.
class ImagesBackend final : public engine::EngineBackend {
public:
    std::vector<std::string> received;  // "image from builder", per image
    std::vector<std::string> removed;
    engine::EngineClient* builder = nullptr;

    std::string describe() const override { return "unix:///images.sock"; }
    engine::BoxEngine& boxes() override { throw std::logic_error("no box in this test"); }
    engine::EngineProbe& probe() override { throw std::logic_error("no run in this test"); }
    daemon::EngineControl& control() override { throw std::logic_error("the pool is given the control"); }
    net::awaitable<Expected<images::EngineImageState>> image_state(const images::ImageRecord&) override
    {
        co_return make_error("unused", "not in this test");
    }
    net::awaitable<std::vector<std::string>> receive_images(engine::EngineClient& from, std::vector<vm::RecordedImage> images,
                                                            std::filesystem::path) override
    {
        builder = &from;
        std::vector<std::string> notes;
        for (const auto& image : images) received.push_back(image.name);
        for (const auto& image : images) notes.push_back("received " + image.name);
        co_return notes;
    }
    net::awaitable<Expected<void>> remove_image(const std::string& image_id) override
    {
        removed.push_back(image_id);
        co_return Expected<void>{};
    }
    bool keeps_warm_boxes() const override { return true; }
};

struct PoolFixture {
    net::io_context io;
    EnginePool pool{{{"local", "unix:///local.sock", true}, {"far", "ssh://u@far:22", true}, {"near", "unix:///n.sock", true}}};
    ScriptedControl local{io}, far{io}, near{io};
    EnginePoolControl control{pool, {{&local, nullptr}, {&far, nullptr}, {&near, nullptr}}, nullptr, [] {
                                  return Expected<std::vector<vm::RecordedImage>>(std::vector<vm::RecordedImage>{});
                              }, "/nonexistent"};

    void run(net::awaitable<void> work)
    {
        test::run_to_result(io, [](net::awaitable<void> inner) -> net::awaitable<bool> {
            co_await std::move(inner);
            co_return true;
        }(std::move(work)));
    }
};

}  // namespace

TEST_CASE("The periodic re-check checks only the engines that are not verified, and records what it finds")
{
    PoolFixture f;
    f.local.then(true);
    f.far.then(false);
    f.far.then(true);
    f.near.then(true);
    f.run([&]() -> net::awaitable<void> { co_await f.control.status(); }());
    CHECK(f.pool.describe()[1].verified == false);
    f.pool.record_lost(2, "connection refused");

    f.run(f.control.recheck_unverified());
    CHECK(f.local.checks() == 1);  // verified: left alone
    CHECK(f.far.checks() == 2);
    CHECK(f.near.checks() == 2);
    CHECK(f.pool.describe()[1].verified == true);
    CHECK(f.pool.describe()[2].verified == true);
    REQUIRE(f.pool.choose().has_value());

    f.run(f.control.recheck_unverified());
    CHECK(f.far.checks() == 2);  // all verified now: nothing to check
    CHECK(f.near.checks() == 2);
}

TEST_CASE("A re-check that ends after a later check of the same engine does not overwrite it")
{
    PoolFixture f;
    f.local.then(true);
    f.far.then(false);
    f.far.then(false, 100ms);  // the re-check: slow, and still failing when it began
    f.far.then(true);          // `pybox vm status` meanwhile: the engine is back
    f.near.then(true);
    f.run([&]() -> net::awaitable<void> { co_await f.control.status(); }());
    REQUIRE(f.pool.describe()[1].verified == false);

    bool rechecked = false;
    net::co_spawn(f.io, [&]() -> net::awaitable<void> {
        co_await f.control.recheck_unverified();
        rechecked = true;
    }, net::detached);
    f.run([&]() -> net::awaitable<void> {
        net::steady_timer pause(f.io, 20ms);
        co_await pause.async_wait(net::use_awaitable);
        co_await f.control.status();
    }());
    while (!rechecked && f.io.run_one() > 0) {
    }
    CHECK(rechecked);
    CHECK(f.far.checks() == 3);
    CHECK(f.pool.describe()[1].verified == true);
}

TEST_CASE("The re-check runs every interval until it is cancelled")
{
    PoolFixture f;
    f.local.then(false);
    f.far.then(true);
    f.near.then(true);
    net::cancellation_signal stop;
    net::co_spawn(f.io, f.control.recheck_forever(std::chrono::seconds(1)),
                  net::bind_cancellation_slot(stop.slot(), net::detached));
    net::steady_timer end(f.io, 2500ms);
    end.async_wait([&](const boost::system::error_code&) { stop.emit(net::cancellation_type::terminal); });
    f.io.run();
    CHECK(f.local.checks() == 2);  // at 1 s and 2 s, never at once
    CHECK(f.far.checks() == 1);    // verified at 1 s, so left alone at 2 s
}

TEST_CASE("The other engines' backends receive the recorded images from the local engine's before their check, and lose removed ones")
{
    test::EngineFixture local_engine;  // the image builder: never asked here
    net::io_context io;
    EnginePool pool{{{"local", "unix:///local.sock", true}, {"near", "unix:///n.sock", true}, {"far", "ssh://u@far:22", true}}};
    ScriptedControl local{io}, near{io}, far{io};
    local.then(true);
    near.then(true);
    far.then(false);
    ImagesBackend near_images, far_images;
    EnginePoolControl control{pool,
                              {{&local, nullptr}, {&near, &near_images}, {&far, &far_images}},
                              &*local_engine.client,
                              [] {
                                  return Expected<std::vector<vm::RecordedImage>>(std::vector<vm::RecordedImage>{
                                      {"stdlib", "sha256:" + std::string(64, 'a')}, {"data", "sha256:" + std::string(64, 'b')}});
                              },
                              "/nonexistent"};
    test::run_to_result(io, [](EnginePoolControl& pool_control) -> net::awaitable<bool> {
        co_await pool_control.copy_images_everywhere();
        co_await pool_control.remove_image_everywhere("sha256:" + std::string(64, 'c'));
        co_return true;
    }(control));
    for (auto* backend : {&near_images, &far_images}) {
        CHECK(backend->received == std::vector<std::string>{"stdlib", "data"});
        CHECK(backend->builder == &*local_engine.client);
        CHECK(backend->removed == std::vector<std::string>{"sha256:" + std::string(64, 'c')});
    }
    CHECK(local.checks() == 0);  // the local engine builds the images: nothing is brought to it
    CHECK(near.checks() == 1);
    CHECK(far.checks() == 1);
    const auto engines = pool.describe();
    CHECK(engines[1].verified);
    CHECK(engines[1].notes == std::vector<std::string>{"received stdlib", "received data"});
    CHECK_FALSE(engines[2].verified);
    CHECK(local_engine.engine->requests().empty());
}
