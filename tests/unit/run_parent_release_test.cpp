// The sweep's releaser of run parents (daemon/reconcile/run_parent_release.hpp) against a
// scripted CgroupHost: a busy run parent is emptied, then its removal tried again, until it
// succeeds or the retries run out.
#include "daemon/reconcile/run_parent_release.hpp"

#include "daemon/run/run_cgroup.hpp"
#include "tests/support/fake_engine.hpp"

#include <catch2/catch.hpp>

#include <deque>

using namespace pybox;
using namespace pybox::daemon;
namespace net = boost::asio;

namespace {

const Error k_busy = make_error("cgroup_busy", "busy");

class ScriptedHost final : public watcher::CgroupHost {
public:
    std::deque<Expected<void>> removals;  // the last one repeats
    Expected<int> kill_result = 1;
    std::vector<std::string> calls;

    std::string mount_root() const override { return "/sys/fs/cgroup"; }
    std::string describe() const override { return "scripted"; }
    net::awaitable<Expected<void>> create_run_parent(int, std::string) override { co_return Expected<void>{}; }
    net::awaitable<Expected<void>> remove_run_parent(std::string path) override
    {
        calls.push_back("remove " + path);
        auto result = removals.front();
        if (removals.size() > 1) removals.pop_front();
        co_return result;
    }
    net::awaitable<Expected<int>> empty_run_parent(std::string path) override
    {
        calls.push_back("empty " + path);
        co_return kill_result;
    }
    Expected<std::unique_ptr<watcher::WatchSession>> start_watch(const std::vector<std::string>&) override
    {
        return make_error("spawn_failed", "not here");
    }
};

Expected<void> release(ScriptedHost& host)
{
    net::io_context io;
    return test::run_to_result(io, run_parent_releaser(host, "install")("run-1"));
}

const std::string k_path = run_parent_path("install", "run-1");

}  // namespace

TEST_CASE("A run parent that can be removed is removed, and nothing is killed")
{
    ScriptedHost host;
    host.removals = {Expected<void>{}};
    CHECK(release(host).has_value());
    CHECK(host.calls == std::vector<std::string>{"remove " + k_path});
}

TEST_CASE("A busy run parent of a box the engine no longer has is emptied until it can be removed")
{
    ScriptedHost host;
    host.removals = {k_busy, k_busy, Expected<void>{}};
    CHECK(release(host).has_value());
    CHECK(host.calls == std::vector<std::string>{"remove " + k_path, "empty " + k_path, "remove " + k_path,
                                                 "empty " + k_path, "remove " + k_path});
}

TEST_CASE("A run parent still busy after every retry stays, and the sweep hears why")
{
    ScriptedHost host;
    host.removals = {k_busy};
    const auto released = release(host);
    REQUIRE_FALSE(released.has_value());
    CHECK(released.error().code == "cgroup_busy");
    CHECK(std::count(host.calls.begin(), host.calls.end(), "empty " + k_path) == k_release_retries);
    CHECK(std::count(host.calls.begin(), host.calls.end(), "remove " + k_path) == 1 + k_release_retries);
}

TEST_CASE("Other failures are returned as they are, and nothing is killed")
{
    ScriptedHost host;
    host.removals = {make_error("cgroup_failed", "read-only")};
    CHECK(release(host).error().code == "cgroup_failed");
    host.calls.clear();
    host.removals = {k_busy};
    host.kill_result = make_error("engine_unreachable", "gone");
    CHECK(release(host).error().code == "engine_unreachable");
    CHECK(host.calls == std::vector<std::string>{"remove " + k_path, "empty " + k_path});
}
