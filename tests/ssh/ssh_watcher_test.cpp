// The watcher over ssh against the fixture's sshd and engine2: the same box watched at once by
// the local watcher (engine2 runs on this host) and by the ssh one gives the same readings; and
// the colima VM's watcher host (macOS) reaching "the VM" directly, or through a stand-in for
// `colima ssh` that runs its commands on this host.
#include "common/process.hpp"
#include "daemon/engine/docker_box_engine.hpp"
#include "daemon/engine/docker_facts.hpp"
#include "daemon/engine/ssh_dialer.hpp"
#include "daemon/engine/ssh_session.hpp"
#include "daemon/macos/colima_cgroup_host.hpp"
#include "daemon/macos/colima_ssh_channels.hpp"
#include "daemon/run/run_cgroup.hpp"
#include "daemon/watcher/local_cgroup_host.hpp"
#include "daemon/watcher/ssh_cgroup_host.hpp"
#include "daemon/watcher/watch_script.hpp"

#include "tests/ssh/ssh_fixture.hpp"
#include "tests/support/fake_colima.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>

#include <fstream>
#include <random>

using namespace pybox;
using namespace pybox::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

std::string random_run_id()
{
    std::random_device random;
    return "ssh-" + std::to_string(random() % 1'000'000'000);
}

}  // namespace

TEST_CASE("Run parents are made and removed over ssh, and a busy one is refused")
{
    Fixture fixture;
    auto session = std::make_shared<engine::SshSession>(fixture.engine());
    boost::asio::io_context io;
    watcher::SshCgroupHost host(io.get_executor(), session);
    const std::string parent = "/pybox-ssh-test/" + random_run_id();
    run(io, [&]() -> boost::asio::awaitable<void> {
        REQUIRE((co_await host.create_run_parent(1, parent)).has_value());
        CHECK(std::filesystem::is_directory("/sys/fs/cgroup/memory" + parent));
        CHECK(std::filesystem::is_directory("/sys/fs/cgroup/pids" + parent));
        std::filesystem::create_directory("/sys/fs/cgroup/pids" + parent + "/child");
        auto busy = co_await host.remove_run_parent(parent);
        REQUIRE_FALSE(busy.has_value());
        CHECK(busy.error().code == "cgroup_busy");
        std::filesystem::remove("/sys/fs/cgroup/pids" + parent + "/child");
        REQUIRE((co_await host.remove_run_parent(parent)).has_value());
        CHECK_FALSE(std::filesystem::exists("/sys/fs/cgroup/memory" + parent));
        CHECK((co_await host.remove_run_parent(parent)).has_value());  // already gone is fine
        CHECK((co_await host.remove_run_parent("/pybox-ssh-test")).has_value());
        auto strange = co_await host.create_run_parent(1, "/pybox/$(reboot)");
        REQUIRE_FALSE(strange.has_value());
        CHECK(strange.error().code == "cgroup_failed");
    });
}

TEST_CASE("A run parent holding a lost process is emptied over ssh and can then be removed")
{
    Fixture fixture;
    auto session = std::make_shared<engine::SshSession>(fixture.engine());
    boost::asio::io_context io;
    watcher::SshCgroupHost host(io.get_executor(), session);
    const std::string parent = "/pybox-ssh-test/" + random_run_id();
    const auto lost = spawn_detached({"/bin/sleep", "60"}, "/dev/null");
    REQUIRE(lost.has_value());
    run(io, [&]() -> boost::asio::awaitable<void> {
        REQUIRE((co_await host.create_run_parent(1, parent)).has_value());
        std::filesystem::create_directory("/sys/fs/cgroup/pids" + parent + "/box");
        std::ofstream("/sys/fs/cgroup/pids" + parent + "/box/cgroup.procs") << *lost << "\n";
        auto busy = co_await host.remove_run_parent(parent);
        REQUIRE_FALSE(busy.has_value());
        CHECK(busy.error().code == "cgroup_busy");
        auto sent = co_await host.empty_run_parent(parent);
        REQUIRE(sent.has_value());
        CHECK(*sent == 1);
        boost::asio::steady_timer wait(io);
        for (int poll = 0; poll < 100 && process_alive(*lost); ++poll) {
            wait.expires_after(10ms);
            co_await wait.async_wait(boost::asio::use_awaitable);
        }
        CHECK_FALSE(process_alive(*lost));
        // Emptied again, now that the process has left it, its cgroup goes too.
        auto again = co_await host.empty_run_parent(parent);
        REQUIRE(again.has_value());
        CHECK(*again == 0);
        CHECK_FALSE(std::filesystem::exists("/sys/fs/cgroup/pids" + parent + "/box"));
        CHECK((co_await host.remove_run_parent(parent)).has_value());
        CHECK((co_await host.remove_run_parent("/pybox-ssh-test")).has_value());
    });
}

TEST_CASE("A run parent call to a host that never answers ends in time without blocking the event loop")
{
    Fixture fixture;
    boost::asio::io_context io;
    // Takes the TCP connection (the kernel's backlog) and never says a word of ssh.
    boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    auto engine = fixture.engine();
    engine.address.port = silent.local_endpoint().port();
    watcher::SshCgroupHost host(io.get_executor(), std::make_shared<engine::SshSession>(engine));
    int ticks = 0;
    const auto started = std::chrono::steady_clock::now();
    std::optional<Expected<void>> created;
    run(io, [&]() -> boost::asio::awaitable<void> {
        boost::asio::steady_timer tick(io);
        boost::asio::co_spawn(
            io, [&]() -> boost::asio::awaitable<void> { created = co_await host.create_run_parent(2, "/pybox-ssh-test/x"); },
            boost::asio::detached);
        while (!created) {
            tick.expires_after(100ms);
            co_await tick.async_wait(boost::asio::use_awaitable);
            ++ticks;
        }
    });
    const auto took = std::chrono::steady_clock::now() - started;
    REQUIRE(created);
    REQUIRE_FALSE(created->has_value());
    INFO(created->error().message);
    CHECK((created->error().code == "engine_unreachable" || created->error().code == "engine_timeout"));
    CHECK(took >= watcher::k_cgroup_command_timeout);
    CHECK(took < watcher::k_cgroup_command_timeout + 1500ms);
    // The loop kept running meanwhile: about one tick per 100 ms.
    CHECK(ticks >= watcher::k_cgroup_command_timeout / 100ms - 5);
}

namespace {

// One box on engine2 (this host's kernel) watched at once by `remote` and by the local watcher:
// both must end with the final reading and read the same totals.
void check_same_readings_as_local(Fixture& fixture, boost::asio::io_context& io,
                                  const std::shared_ptr<engine::SshSession>& session, watcher::CgroupHost& remote)
{
    engine::EngineClient client(io.get_executor(), engine::make_ssh_dialer(io.get_executor(), session));
    watcher::LocalCgroupHost local(io.get_executor());
    watcher::WatchOutput remote_output, local_output;
    daemon::RunCgroup cgroup;
    run(io, [&]() -> boost::asio::awaitable<void> {
        REQUIRE((co_await client.ping(k_call)).has_value());
        co_await load_tiny_image(client, fixture);
        auto info = co_await client.info(k_call);
        REQUIRE(info.has_value());
        auto facts = engine::cgroup_facts_from_info(*info);
        REQUIRE(facts.has_value());
        auto run_cgroup = daemon::run_cgroup_for(*facts, "ssh-watch-test", random_run_id());
        REQUIRE(run_cgroup.has_value());
        cgroup = *run_cgroup;
        REQUIRE((co_await remote.create_run_parent(cgroup.version, cgroup.parent)).has_value());
        auto spec = json::parse(R"({"Image": ")" + std::string(k_tiny_image) + R"(",
            "Cmd": ["/bin/sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"],
            "Labels": {"pybox.test": "ssh"},
            "HostConfig": {"NetworkMode": "none", "Memory": 67108864, "PidsLimit": 16, "CgroupParent": ")" +
                                cgroup.parent + R"("}})")
                        .as_object();
        auto created = co_await client.create_container(spec, "", k_call);
        REQUIRE(created.has_value());
        const auto box_cgroup = engine::DockerBoxEngine(client, "runc").box_cgroup(cgroup.parent, created->id);
        REQUIRE(box_cgroup.has_value());
        const watcher::WatchTarget target{static_cast<watcher::CgroupVersion>(cgroup.version), "/sys/fs/cgroup",
                                          *box_cgroup, cgroup.parent};
        const auto argv = watcher::watch_command(target, watcher::watch_schedule(30));
        auto remote_watch = remote.start_watch(argv);
        auto local_watch = local.start_watch(argv);
        REQUIRE(remote_watch.has_value());
        REQUIRE(local_watch.has_value());
        auto waiting = co_await client.begin_wait(created->id, k_call);
        REQUIRE(waiting.has_value());
        REQUIRE((co_await client.start_container(created->id, k_call)).has_value());
        auto exited = co_await (*waiting)->result(engine::Timeout(60'000));
        REQUIRE(exited.has_value());
        CHECK(exited->status_code == 0);
        (*remote_watch)->request_final();
        (*local_watch)->request_final();
        remote_output = co_await (*remote_watch)->finish(10s);
        local_output = co_await (*local_watch)->finish(10s);
        REQUIRE((co_await client.remove_container(created->id, k_call)).has_value());
    });
    run(io, [&]() -> boost::asio::awaitable<void> {
        CHECK((co_await remote.remove_run_parent(cgroup.parent)).has_value());
        // And the test installation's cgroup above it (the engine made it in every hierarchy).
        const auto installation = cgroup.parent.substr(0, cgroup.parent.find('/', 1));
        CHECK((co_await remote.remove_run_parent(installation)).has_value());
    });
    INFO("remote:\n" << remote_output.text << "local:\n" << local_output.text);
    const auto version = static_cast<watcher::CgroupVersion>(cgroup.version);
    auto remote_record = watcher::parse_watch_output(remote_output.text, version);
    auto local_record = watcher::parse_watch_output(local_output.text, version);
    REQUIRE(remote_record.has_value());
    REQUIRE(local_record.has_value());
    CHECK_FALSE(remote_output.killed);
    CHECK(remote_record->end == watcher::WatchEnd::final);
    CHECK(local_record->end == watcher::WatchEnd::final);
    CHECK_FALSE(remote_record->samples.empty());
    // The run parent's counters are frozen once no task is left: both read the same totals.
    REQUIRE(remote_record->final_parent.has_value());
    REQUIRE(local_record->final_parent.has_value());
    REQUIRE_FALSE(remote_record->final_parent->gone);
    // Gauges (current usage) may move between the two reads; totals and peaks may not.
    for (const auto& [key, value] : local_record->final_parent->values) {
        const bool gauge = key.find("current") != std::string::npos ||
                           (key.find("usage_in_bytes") != std::string::npos && key.find("max_usage") == std::string::npos);
        if (gauge) continue;
        INFO(key);
        CHECK(remote_record->final_parent->value(key) == value);
    }
    const auto cpu_key = version == watcher::CgroupVersion::v1 ? "cpuacct.usage" : "cpu.stat.usage_usec";
    CHECK(remote_record->final_parent->value(cpu_key).value_or(0) > 0);
}

}  // namespace

TEST_CASE("The watcher over ssh reports the same readings as the local watcher for the same box")
{
    Fixture fixture;
    auto session = std::make_shared<engine::SshSession>(fixture.engine());
    boost::asio::io_context io;
    watcher::SshCgroupHost remote(io.get_executor(), session);
    check_same_readings_as_local(fixture, io, session, remote);
}

TEST_CASE("The colima VM's watcher host uses checked direct ssh when it can")
{
    Fixture fixture;
    test::FakeColima colima;
    boost::asio::io_context io;
    macos::ColimaCgroupHost vm(io.get_executor());
    run(io, [&]() -> boost::asio::awaitable<void> {
        co_await vm.reach(fixture.engine(), std::make_shared<macos::ColimaSshChannels>(
                                                macos::ColimaLayout(colima.runtime.paths), colima.bin / "colima"));
        CHECK(vm.reached());
        CHECK((co_await vm.remove_run_parent("/pybox-ssh-test/none")).has_value());
    });
    CHECK_THAT(vm.describe(), Catch::StartsWith("the colima VM: ssh://") && !Catch::Contains("direct ssh failed"));
    CHECK_FALSE(std::filesystem::exists(colima.calls));  // colima was never needed
}

TEST_CASE("With a host key that does not match the pin, the colima VM is watched through `colima ssh`, reading the same")
{
    Fixture fixture;
    test::FakeColima colima;  // its `colima ssh -- sh -c` runs on this host, where engine2's boxes are
    auto session = std::make_shared<engine::SshSession>(fixture.engine());
    boost::asio::io_context io;
    macos::ColimaCgroupHost vm(io.get_executor());
    auto direct = fixture.engine();
    direct.known_hosts.reset();
    direct.host_key_sha256 = "SHA256:VZ25S2eYzkLAezlMX5f77FRikwEEkGc2jTPQIxihLe8";  // not the test sshd's key
    run(io, [&]() -> boost::asio::awaitable<void> {
        co_await vm.reach(direct, std::make_shared<macos::ColimaSshChannels>(macos::ColimaLayout(colima.runtime.paths),
                                                                             colima.bin / "colima"));
    });
    REQUIRE(vm.reached());
    CHECK_THAT(vm.describe(), Catch::Contains(" ssh` (cgroup files read over ssh); direct ssh failed: ") &&
                                  Catch::Contains("SHA256:"));
    check_same_readings_as_local(fixture, io, session, vm);
    CHECK_THAT(test::read_text(colima.calls), Catch::Contains("ssh --profile pybox -- sh -c"));
}
