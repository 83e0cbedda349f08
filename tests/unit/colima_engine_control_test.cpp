// ColimaEngineControl against the scripted stand-in for colima and a fake engine on the VM's
// Docker socket: colima runs off the event loop, then the engine checks run.
#include "daemon/macos/colima_engine_control.hpp"
#include "tests/support/fake_colima.hpp"
#include "tests/support/fake_engine.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

using namespace pybox;
using namespace std::chrono_literals;
namespace net = boost::asio;
using macos::ColimaEngineControl;
using test::FakeColima;

namespace {

struct ColimaFixture {
    FakeColima colima;
    test::EngineFixture engine;
    ColimaEngineControl control{engine.io.get_executor(),
                                *engine.client,
                                colima.runtime.paths,
                                "0123456789abcdef0123456789abcdef",
                                vm::DaemonConfig{},
                                [] { return Expected<std::vector<vm::RecordedImage>>(std::vector<vm::RecordedImage>{}); },
                                [this] { return Expected<macos::ColimaTools>(macos::ColimaTools{colima.bin / "colima", colima.bin / "docker"}); }};
};

}  // namespace

TEST_CASE("ColimaEngineControl starts the VM off the event loop, then checks the engine on the VM's socket")
{
    ColimaFixture f;
    std::ofstream(f.colima.start_delay) << "0.5\n";
    f.engine.engine->go_away();
    int ticks = 0;
    bool done = false;
    net::co_spawn(
        f.engine.io,
        [&]() -> net::awaitable<void> {
            net::steady_timer tick(f.engine.io);
            while (!done) {
                tick.expires_after(20ms);
                co_await tick.async_wait(net::use_awaitable);
                ++ticks;
            }
        },
        net::detached);
    auto started = f.engine.run(f.control.start());
    done = true;
    // colima started and the checks then found no engine behind the socket.
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "engine_unreachable");
    CHECK_THAT(f.colima.called(), Catch::Contains("start --profile pybox"));
    REQUIRE(f.control.watcher_target());
    CHECK(f.control.watcher_target()->address == engine::SshAddress{"ada", "127.0.0.1", 60022});
    // The loop ran on while colima took its 0.5 s.
    CHECK(ticks >= 10);
}

TEST_CASE("ColimaEngineControl answers a failed colima start without checking the engine")
{
    ColimaFixture f;
    std::ofstream(f.colima.version) << "colima version 0.9.1\n";
    auto started = f.engine.run(f.control.start());
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "colima_too_old");
    CHECK(f.engine.engine->requests().empty());
    CHECK_FALSE(f.control.watcher_target());
}

TEST_CASE("ColimaEngineControl stops the VM with colima stop and names the VM's Docker socket")
{
    ColimaFixture f;
    auto stopped = f.engine.run(f.control.stop());
    REQUIRE(stopped.has_value());
    CHECK(stopped->stopped);
    CHECK(stopped->engine_socket == macos::ColimaLayout(f.colima.runtime.paths).docker_socket.string());
    CHECK_THAT(f.colima.called(), Catch::Contains("stop --profile pybox"));
}

TEST_CASE("ColimaEngineControl fails as the tool check does when colima is not trusted")
{
    test::EngineFixture engine;
    FakeColima colima;
    ColimaEngineControl control(engine.io.get_executor(), *engine.client, colima.runtime.paths, "0123456789abcdef0123456789abcdef",
                                vm::DaemonConfig{}, {}, [] { return Expected<macos::ColimaTools>(make_error("tool_untrusted", "no")); });
    auto started = engine.run(control.start());
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "tool_untrusted");
    CHECK_FALSE(std::filesystem::exists(colima.calls));
}
