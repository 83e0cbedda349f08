#include "daemon/watcher/local_cgroup_host.hpp"

#include "common/limits.hpp"
#include "common/process.hpp"
#include "tests/support/fake_engine.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

using namespace pybox;
namespace fs = std::filesystem;
namespace net = boost::asio;
using std::chrono::milliseconds;

namespace {

struct TempTree {
    fs::path root = fs::temp_directory_path() / ("pybox-cgroup-host-" + std::to_string(current_pid()));
    TempTree() { fs::create_directories(root); }
    ~TempTree() { fs::remove_all(root); }
};

watcher::WatchOutput run_watch(const std::vector<std::string>& argv, bool ask_final, milliseconds timeout)
{
    net::io_context io;
    watcher::LocalCgroupHost host(io.get_executor());
    std::optional<watcher::WatchOutput> output;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            auto session = host.start_watch(argv);
            REQUIRE(session.has_value());
            if (ask_final) (*session)->request_final();
            output = co_await (*session)->finish(timeout);
        },
        [](std::exception_ptr e) {
            if (e) std::rethrow_exception(e);
        });
    io.run();
    REQUIRE(output);
    return *output;
}

}  // namespace

TEST_CASE("A run parent is made in the v1 controllers PyBox reads and removed from every hierarchy")
{
    TempTree tree;
    for (auto hierarchy : {"memory", "cpu", "cpuacct", "pids", "cpuset"}) fs::create_directories(tree.root / hierarchy);
    net::io_context io;
    watcher::LocalCgroupHost host(io.get_executor(), tree.root);
    REQUIRE(test::run_to_result(io, host.create_run_parent(1, "/pybox-i/r1")).has_value());
    for (auto controller : {"memory", "cpu", "cpuacct", "pids"}) CHECK(fs::is_directory(tree.root / controller / "pybox-i/r1"));
    CHECK_FALSE(fs::exists(tree.root / "cpuset/pybox-i/r1"));
    fs::create_directories(tree.root / "cpuset/pybox-i/r1");  // as the engine would
    REQUIRE(test::run_to_result(io, host.remove_run_parent("/pybox-i/r1")).has_value());
    for (auto hierarchy : {"memory", "cpu", "cpuacct", "pids", "cpuset"}) {
        CHECK_FALSE(fs::exists(tree.root / hierarchy / "pybox-i/r1"));
        CHECK(fs::is_directory(tree.root / hierarchy / "pybox-i"));
    }
}

TEST_CASE("A v2 run parent lives below the unified mount, and removing a missing one is fine")
{
    TempTree tree;
    net::io_context io;
    watcher::LocalCgroupHost host(io.get_executor(), tree.root);
    REQUIRE(test::run_to_result(io, host.create_run_parent(2, "/pybox-i/r2")).has_value());
    CHECK(fs::is_directory(tree.root / "pybox-i/r2"));
    REQUIRE(test::run_to_result(io, host.remove_run_parent("/pybox-i/r2")).has_value());
    CHECK_FALSE(fs::exists(tree.root / "pybox-i/r2"));
    CHECK(test::run_to_result(io, host.remove_run_parent("/pybox-i/r2")).has_value());
}

TEST_CASE("A run parent with something still below it is reported busy")
{
    TempTree tree;
    net::io_context io;
    watcher::LocalCgroupHost host(io.get_executor(), tree.root);
    fs::create_directories(tree.root / "pybox-i/r3/box");
    const auto removed = test::run_to_result(io, host.remove_run_parent("/pybox-i/r3"));
    REQUIRE_FALSE(removed.has_value());
    CHECK(removed.error().code == "cgroup_busy");
}

TEST_CASE("The final reading is asked for once the watcher has announced itself")
{
    const auto output = run_watch(
        {"/bin/sh", "-c", "trap 'echo final; exit 0' USR1; echo header; while :; do sleep 0.01; done"}, true,
        milliseconds(5'000));
    CHECK(output.text == "header\nfinal\n");
    CHECK_FALSE(output.killed);
    CHECK_FALSE(output.truncated);
}

TEST_CASE("A watcher that does not end in time is killed and its output kept")
{
    const auto output = run_watch({"/bin/sh", "-c", "echo header; echo 'sample 1'; exec sleep 30"}, false,
                                  milliseconds(200));
    CHECK(output.killed);
    CHECK(output.text == "header\nsample 1\n");
    CHECK(output.first_sample_after_s);
}

TEST_CASE("A watcher's output beyond the cap is dropped and flagged")
{
    const auto output = run_watch({"/bin/sh", "-c", "yes 0123456789abcdef | head -c 200000"}, false,
                                  milliseconds(5'000));
    CHECK(output.truncated);
    CHECK(output.text.size() == limits::k_watch_max_output_bytes);
}

TEST_CASE("What is left in a run parent, in any hierarchy and in the cgroups below it, is killed and counted")
{
    TempTree tree;
    const auto lost = spawn_detached({"/bin/sleep", "60"}, tree.root / "sleep.log");
    REQUIRE(lost.has_value());
    // A v1-shaped tree: the lost process is listed in two hierarchies, in the box's cgroup below
    // the run parent; another run parent's process is not touched.
    for (const auto* controller : {"memory", "pids"}) {
        fs::create_directories(tree.root / controller / "pybox-x" / "run-1" / "box");
        std::ofstream(tree.root / controller / "pybox-x" / "run-1" / "box" / "cgroup.procs") << *lost << "\n";
        std::ofstream(tree.root / controller / "pybox-x" / "run-1" / "cgroup.procs") << "";
    }
    const auto other = spawn_detached({"/bin/sleep", "60"}, tree.root / "sleep.log");
    REQUIRE(other.has_value());
    fs::create_directories(tree.root / "memory" / "pybox-x" / "run-2");
    std::ofstream(tree.root / "memory" / "pybox-x" / "run-2" / "cgroup.procs") << *other << "\n";

    net::io_context io;
    watcher::LocalCgroupHost host(io.get_executor(), tree.root);
    const auto sent = test::run_to_result(io, host.empty_run_parent("/pybox-x/run-1"));
    REQUIRE(sent.has_value());
    CHECK(*sent >= 1);  // once per hierarchy that lists it while it still lives
    for (int poll = 0; poll < 200 && process_alive(*lost); ++poll) std::this_thread::sleep_for(milliseconds(10));
    CHECK_FALSE(process_alive(*lost));
    CHECK(process_alive(*other));
    const auto none = test::run_to_result(io, host.empty_run_parent("/pybox-x/none"));
    REQUIRE(none.has_value());
    CHECK(*none == 0);
    send_signal(*other, k_signal_kill);
}
