// How a run is watched when the watcher is off (daemon/run/run_watch.hpp): the reason the
// WatchSetup gives reaches the receipt, as does why a host cannot be reached.
#include "daemon/macos/colima_cgroup_host.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"
#include "tests/support/fake_engine.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace net = boost::asio;
using namespace pybox;
using namespace pybox::daemon;

namespace {

// observed.resources of a run under `setup` whose box never started.
json::value resources_of_unstarted_run(const WatchSetup& setup)
{
    net::io_context io;
    RunWatch watch(setup);
    const auto parent = test::run_to_result(io, watch.prepare(CgroupFacts{1, "cgroupfs"}, "install", "run"));
    CHECK(parent.empty());
    test::run_to_result(io, [&]() -> net::awaitable<bool> {
        co_await watch.finish();
        co_return true;
    }());
    return watch.resources();
}

}  // namespace

TEST_CASE("config.json's \"watcher\": false switches the local watcher off, saying so")
{
    net::io_context io;
    watcher::LocalCgroupHost host(io.get_executor());
    const auto setup = engine_watch_setup(false, &host, "script");
    CHECK(setup.host == nullptr);
    CHECK(setup.off_reason == k_watcher_off_in_config);
    CHECK(engine_watch_setup(true, &host, "script").host == &host);
}

TEST_CASE("A run on macOS before the colima VM is reached reports resources UNKNOWN, saying how to reach it")
{
    net::io_context io;
    macos::ColimaCgroupHost vm(io.get_executor());
    const auto resources = resources_of_unstarted_run(WatchSetup{&vm, "script"});
    CHECK(resources.at("status") == "UNKNOWN");
    CHECK_THAT(std::string(resources.at("reason").as_string()), Catch::Contains(std::string(macos::k_watcher_not_reached_yet)));
}

TEST_CASE("A setup without a host and without a reason of its own gives config.json's reason")
{
    const auto resources = resources_of_unstarted_run(WatchSetup{nullptr, "script"});
    CHECK(resources.at("reason").as_string() == k_watcher_off_in_config);
}
