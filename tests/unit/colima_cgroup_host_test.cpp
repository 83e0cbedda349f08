// ColimaCgroupHost without a VM: the fallback through the stand-in for colima (whose `colima ssh
// -- sh -c COMMAND` runs COMMAND on this host) against a cgroup mount root in a temporary folder.
// The direct path against a real sshd is in tests/ssh/ssh_watcher_test.cpp.
#include "daemon/macos/colima_cgroup_host.hpp"
#include "daemon/macos/colima_ssh_channels.hpp"
#include "tests/support/fake_colima.hpp"
#include "tests/support/fake_engine.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <catch2/catch.hpp>

using namespace pybox;
namespace net = boost::asio;
namespace fs = std::filesystem;

namespace {

// A direct target nobody answers on: a port just closed.
engine::SshEngine refused_target(const fs::path& key)
{
    net::io_context io;
    net::ip::tcp::acceptor closed(io, {net::ip::make_address("127.0.0.1"), 0});
    const auto port = closed.local_endpoint().port();
    closed.close();
    return engine::SshEngine{{"ada", "127.0.0.1", port}, "/var/run/docker.sock", key, std::nullopt,
                             "SHA256:VZ25S2eYzkLAezlMX5f77FRikwEEkGc2jTPQIxihLe8"};
}

}  // namespace

TEST_CASE("Without direct ssh the VM's run parents are made and removed through `colima ssh`, and the host says so")
{
    test::FakeColima colima;
    const auto mount_root = colima.runtime.root / "vm-cgroup";
    fs::create_directory(mount_root);
    net::io_context io;
    macos::ColimaCgroupHost vm(io.get_executor(), mount_root.string());
    auto fallback = std::make_shared<macos::ColimaSshChannels>(macos::ColimaLayout(colima.runtime.paths),
                                                               colima.bin / "colima");
    test::run_to_result(io, [&]() -> net::awaitable<bool> {
        co_await vm.reach(refused_target(colima.runtime.root / "no-key"), fallback);
        co_return true;
    }());
    REQUIRE(vm.reached());
    CHECK_THAT(vm.describe(), Catch::Contains("through `" + (colima.bin / "colima").string() + " ssh` (cgroup files read over ssh); direct ssh failed: "));

    REQUIRE(test::run_to_result(io, vm.create_run_parent(2, "/pybox-x/run-1")).has_value());
    CHECK(fs::is_directory(mount_root / "pybox-x" / "run-1"));
    fs::create_directory(mount_root / "pybox-x" / "run-1" / "child");
    auto busy = test::run_to_result(io, vm.remove_run_parent("/pybox-x/run-1"));
    REQUIRE_FALSE(busy.has_value());
    CHECK(busy.error().code == "cgroup_busy");
    fs::remove(mount_root / "pybox-x" / "run-1" / "child");
    REQUIRE(test::run_to_result(io, vm.remove_run_parent("/pybox-x/run-1")).has_value());
    CHECK_FALSE(fs::exists(mount_root / "pybox-x" / "run-1"));
    CHECK_THAT(colima.called(), Catch::Contains("ssh --profile pybox -- sh -c"));

    vm.forget("gone for the test");
    auto forgotten = test::run_to_result(io, vm.create_run_parent(2, "/pybox-x/run-2"));
    REQUIRE_FALSE(forgotten.has_value());
    CHECK(forgotten.error().code == "watcher_unavailable");
    CHECK_THAT(forgotten.error().message, Catch::Contains("gone for the test"));
    CHECK_FALSE(vm.start_watch({"/bin/true"}).has_value());
    CHECK_FALSE(fs::exists(mount_root / "pybox-x" / "run-2"));
}
