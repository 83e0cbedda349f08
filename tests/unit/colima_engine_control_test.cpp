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
                                config::DaemonConfig{},
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
    // The watcher reached the VM: direct ssh to colima's target (nothing listens there) failed,
    // so through `colima ssh`.
    CHECK(f.control.cgroups().reached());
    CHECK_THAT(f.control.cgroups().describe(), Catch::Contains("the colima VM: the colima VM through `" +
                                                              (f.colima.bin / "colima").string() + " ssh`") &&
                                                   Catch::Contains("; direct ssh failed: ") &&
                                                   Catch::Contains("127.0.0.1:60022"));
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
    CHECK_FALSE(f.control.cgroups().reached());
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

TEST_CASE("The watcher's run parents reach the VM through `colima ssh` when direct ssh fails, until vm stop")
{
    ColimaFixture f;
    REQUIRE(f.engine.run(f.control.start()).has_value() == false);  // the fake engine fails the checks
    REQUIRE(f.control.cgroups().reached());
    // The stand-in's `colima ssh` runs the fixed scripts on this host: removing a run parent that
    // does not exist is a round trip that touches nothing (colima_cgroup_host_test makes one).
    CHECK(f.engine.run(f.control.cgroups().remove_run_parent("/pybox-colima-test/none")).has_value());
    CHECK_THAT(f.colima.called(), Catch::Contains("ssh --profile pybox -- sh -c"));

    REQUIRE(f.engine.run(f.control.stop()).has_value());
    CHECK_FALSE(f.control.cgroups().reached());
    auto after_stop = f.engine.run(f.control.cgroups().create_run_parent(2, "/pybox-colima-test/x"));
    REQUIRE_FALSE(after_stop.has_value());
    CHECK(after_stop.error().code == "watcher_unavailable");
    CHECK_THAT(after_stop.error().message, Catch::Contains("stopped by `pybox vm stop`"));
}

TEST_CASE("After a daemon restart, vm status reaches a running VM with the key pinned by the first start")
{
    ColimaFixture first;
    REQUIRE_FALSE(first.engine.run(first.control.start()).has_value());
    REQUIRE(std::filesystem::exists(macos::ColimaLayout(first.colima.runtime.paths).host_key_pin));
    // A new daemon on the same runtime folder: nothing reached until a status finds the engine.
    ColimaEngineControl restarted(first.engine.io.get_executor(), *first.engine.client, first.colima.runtime.paths,
                                  "0123456789abcdef0123456789abcdef", config::DaemonConfig{},
                                  [] { return Expected<std::vector<vm::RecordedImage>>(std::vector<vm::RecordedImage>{}); },
                                  [&] { return Expected<macos::ColimaTools>(macos::ColimaTools{first.colima.bin / "colima", first.colima.bin / "docker"}); });
    CHECK_FALSE(restarted.cgroups().reached());
    CHECK_THAT(restarted.cgroups().describe(), Catch::Contains(std::string(macos::k_watcher_not_reached_yet)));
    first.engine.engine->on("GET", "/_ping", {test::Reply{test::ping_response("1.41")}});
    const auto status = first.engine.run(restarted.status());
    REQUIRE(status.running);
    CHECK(restarted.cgroups().reached());
    CHECK(std::count(status.notes.begin(), status.notes.end(), "kernel watcher: " + restarted.cgroups().describe()) == 1);
    CHECK_THAT(first.colima.called(), Catch::Contains("ssh-config --profile pybox"));
}

TEST_CASE("A status after a restart without a pinned key leaves the VM unreached, saying why, and pins nothing")
{
    ColimaFixture f;
    f.engine.engine->on("GET", "/_ping", {test::Reply{test::ping_response("1.41")}});
    const auto status = f.engine.run(f.control.status());
    REQUIRE(status.running);
    CHECK_FALSE(f.control.cgroups().reached());
    CHECK_THAT(f.control.cgroups().describe(), Catch::Contains("not pinned yet"));
    CHECK_FALSE(std::filesystem::exists(macos::ColimaLayout(f.colima.runtime.paths).host_key_pin));
    CHECK_THAT(f.colima.called(), !Catch::Contains("ssh_host_ed25519_key"));
}

TEST_CASE("ColimaEngineControl fails as the tool check does when colima is not trusted")
{
    test::EngineFixture engine;
    FakeColima colima;
    ColimaEngineControl control(engine.io.get_executor(), *engine.client, colima.runtime.paths, "0123456789abcdef0123456789abcdef",
                                config::DaemonConfig{}, {}, [] { return Expected<macos::ColimaTools>(make_error("tool_untrusted", "no")); });
    auto started = engine.run(control.start());
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "tool_untrusted");
    CHECK_FALSE(std::filesystem::exists(colima.calls));
}
