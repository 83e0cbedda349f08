// How a run is watched when the watcher is off (daemon/run/run_watch.hpp): the reason the
// WatchSetup gives reaches the receipt, as does why a host cannot be reached.
#include "daemon/macos/colima_cgroup_host.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"
#include "tests/support/fake_box_engine.hpp"
#include "tests/support/fake_engine.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

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
    watcher::ProcessEndLog log;
    const auto setup = engine_watch_setup(false, &host, "script", ProcessEnds{&log, ""}, "");
    CHECK(setup.host == nullptr);
    CHECK(setup.off_reason == k_watcher_off_in_config);
    CHECK(setup.process_ends.log == nullptr);
    CHECK(setup.process_ends.unread == k_watcher_off_in_config);
    const auto on = engine_watch_setup(true, &host, "script", ProcessEnds{&log, ""}, "");
    CHECK(on.host == &host);
    CHECK(on.process_ends.log == &log);
}

TEST_CASE("An engine whose boxes cannot be watched says why, for the resources and the process ends")
{
    const std::string why = "no agent on the nodes";
    const auto setup = engine_watch_setup(true, nullptr, "script", ProcessEnds{nullptr, ""}, why);
    CHECK(setup.host == nullptr);
    CHECK(setup.off_reason == why);
    CHECK(setup.process_ends.log == nullptr);
    CHECK(setup.process_ends.unread == why);
    // config.json's switch still says itself.
    CHECK(engine_watch_setup(false, nullptr, "script", ProcessEnds{nullptr, ""}, why).off_reason == k_watcher_off_in_config);
}

TEST_CASE("A run follows its box's first process in the kernel's record and takes both ends when it finishes")
{
    net::io_context io;
    watcher::ProcessEndLog log;
    {
        RunWatch watch(WatchSetup{nullptr, "script", std::string(k_watcher_off_in_config), ProcessEnds{&log, ""}});
        watch.first_process(100, 10);
        CHECK(log.followed_count() == 1);
        log.record(watcher::ProcFork{100, 101, 11});
        log.record(watcher::ProcExit{101, 0, 20});
        log.record(watcher::ProcExit{100, 0, 21});
        test::run_to_result(io, [&]() -> net::awaitable<bool> {
            co_await watch.finish();
            co_return true;
        }());
        REQUIRE(watch.process_ends());
        CHECK(watch.process_ends()->program->mono_ns == 20);
        CHECK(watch.process_ends()->first->mono_ns == 21);
        CHECK(log.followed_count() == 0);
    }
    {
        // A run that never finished (its start failed) stops following its box when it goes.
        RunWatch watch(WatchSetup{nullptr, "script", std::string(k_watcher_off_in_config), ProcessEnds{&log, ""}});
        watch.first_process(200, 10);
        CHECK(log.followed_count() == 1);
    }
    CHECK(log.followed_count() == 0);
}

TEST_CASE("Without the kernel's record a run says why, in the words the setup gives")
{
    RunWatch unread(WatchSetup{nullptr, "script", std::string(k_watcher_off_in_config), ProcessEnds{nullptr, "no connector"}});
    unread.first_process(100, 10);
    CHECK_FALSE(unread.process_ends());
    CHECK(unread.process_ends_unread() == "no connector");
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

namespace {

// A host whose run parents are made and removed at once and whose watchers only record their argv.
class RecordingHost final : public watcher::CgroupHost {
public:
    std::vector<std::vector<std::string>> watches;

    std::string mount_root() const override { return "/sys/fs/cgroup"; }
    std::string describe() const override { return "recording"; }
    net::awaitable<Expected<void>> create_run_parent(int, std::string) override { co_return Expected<void>{}; }
    net::awaitable<Expected<void>> remove_run_parent(std::string) override { co_return Expected<void>{}; }
    net::awaitable<Expected<int>> empty_run_parent(std::string) override { co_return 0; }
    Expected<std::unique_ptr<watcher::WatchSession>> start_watch(const std::vector<std::string>& argv) override
    {
        watches.push_back(argv);
        return make_error("spawn_failed", "recorded only");
    }
};

bool names(const std::vector<std::string>& argv, const std::string& path)
{
    return std::find(argv.begin(), argv.end(), path) != argv.end();
}

}  // namespace

TEST_CASE("The watcher reads the box's cgroup where its backend placed it, and a backend that names none is not "
          "watched, saying so")
{
    net::io_context io;
    RecordingHost host;
    test::FakeBoxEngine engine(io);
    const auto setup = engine_watch_setup(true, &host, "script", ProcessEnds{nullptr, "no log"}, "");

    RunWatch placed(setup);
    const auto parent = test::run_to_result(io, placed.prepare(CgroupFacts{1, "cgroupfs"}, "install", "run"));
    REQUIRE(parent == run_parent_path("install", "run"));
    placed.start(engine, "box9", 5);
    REQUIRE(host.watches.size() == 1);
    CHECK(names(host.watches[0], *engine.box_cgroup(parent, "box9")));
    CHECK(names(host.watches[0], parent));

    engine.places_boxes = false;
    RunWatch unplaced(setup);
    test::run_to_result(io, unplaced.prepare(CgroupFacts{1, "cgroupfs"}, "install", "run"));
    unplaced.start(engine, "box9", 5);
    CHECK(host.watches.size() == 1);
    test::run_to_result(io, [&]() -> net::awaitable<bool> {
        co_await unplaced.finish();
        co_return true;
    }());
    CHECK(unplaced.resources().at("reason") == "the engine does not say where it placed the box's cgroup");
}
