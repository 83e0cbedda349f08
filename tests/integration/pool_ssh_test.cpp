// The pool with an engine on "another host": a second pyboxd whose only engine that takes runs
// is engine2 reached through the fixture's sshd (ssh://root@127.0.0.1:PORT, host key pinned),
// through the real client, daemon, libssh2 session and engine. Needs the fixtures engine,
// engine2 and ssh (ctest's integration_pool); tagged [pool] with the other pool tests.
#include "tests/integration/harness.hpp"
#include "tests/ssh/ssh_fixture.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>
#include <thread>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

fs::path engine2_socket(const Fixture& fixture) { return fs::path(fixture.engine2_dir()) / "docker.sock"; }

std::string address(const Fixture& fixture) { return "ssh://root@127.0.0.1:" + fixture.port(); }

// config.json's entry for engine2 over ssh; `overrides` replace keys (a wrong key, say).
json::object ssh_entry(const Fixture& fixture, const json::object& overrides = {})
{
    json::object entry{{"id", "far"},
                       {"url", address(fixture)},
                       {"engine_socket", fixture.value("ENGINE_SOCKET")},
                       {"identity_file", fixture.value("USER_KEY")},
                       {"host_key", fixture.value("HOST_KEY")}};
    for (const auto& [key, value] : overrides) entry[key] = value;
    return entry;
}

json::object only_over_ssh(const json::object& entry, json::object extra = {})
{
    extra["engines"] = json::array{entry};
    extra["local_engine"] = false;
    return extra;
}

}  // namespace

TEST_CASE("Through an ssh engine: the seed page's program runs sealed, watched, named, and leaves nothing", "[pool]")
{
    const Fixture fixture;
    SideDaemon daemon("pool-ssh", only_over_ssh(ssh_entry(fixture)));
    const auto started = daemon.pybox({"vm", "start"});
    INFO(started.output << started.error_output);
    REQUIRE(started.exit_code == 0);
    CHECK_THAT(daemon.pybox({"vm", "status"}).output, Catch::Contains("far  verified") && Catch::Contains(address(fixture)));

    const auto run = daemon.run_json("print(6*7)\n");
    INFO(json::serialize(run.receipt));
    CHECK(run.process.exit_code == 0);
    CHECK(run.process.output.find("42") != std::string::npos);
    CHECK(run.receipt.at("engine").at("id") == "far");
    CHECK_THAT(std::string(run.receipt.at("engine").at("address").as_string()),
               Catch::StartsWith(address(fixture) + " (engine socket " + fixture.value("ENGINE_SOCKET") + ")"));
    CHECK(run.receipt.at("observed").at("policy_verified_before_start") == true);
    CHECK(run.receipt.at("observed").at("effective_policy").at("mismatches").as_array().empty());
    const auto& resources = run.receipt.at("observed").at("resources");
    CHECK(resources.at("status") == "COLLECTED");
    CHECK_THAT(std::string(resources.at("host").as_string()), Catch::Contains(address(fixture)));
    CHECK(labelled_boxes_on(engine2_socket(fixture), daemon.home()).empty());

    // A hostile program meets the same limits over ssh: the memory cap ends it.
    const auto greedy = daemon.run_json("b = bytearray(1024 * 1024 * 1024)\n");
    INFO(json::serialize(greedy.receipt));
    CHECK(greedy.receipt.at("engine").at("id") == "far");
    CHECK(greedy.process.exit_code != 0);
    CHECK(labelled_boxes_on(engine2_socket(fixture), daemon.home()).empty());
}

TEST_CASE("An ssh engine with a wrong pinned host key or user key is refused with a clear message", "[pool]")
{
    const Fixture fixture;
    {
        SideDaemon daemon("pool-ssh", only_over_ssh(ssh_entry(fixture, {{"host_key", "SHA256:" + std::string(43, 'A')}})));
        const auto started = daemon.pybox({"vm", "start"});
        CHECK(started.exit_code == 125);
        CHECK_THAT(started.output + started.error_output,
                   Catch::Contains(fixture.value("HOST_KEY")) && Catch::Contains(address(fixture)));
        CHECK(daemon.pybox({"exec", "-"}, "print(1)\n").exit_code == 125);
    }
    {
        SideDaemon daemon("pool-ssh", only_over_ssh(ssh_entry(fixture, {{"identity_file", fixture.value("OTHER_KEY")}})));
        const auto started = daemon.pybox({"vm", "start"});
        CHECK(started.exit_code == 125);
        CHECK_THAT(started.output + started.error_output, Catch::Contains(address(fixture)));
    }
}

TEST_CASE("sshd killed mid-run: an honest receipt, and after sshd is back the box is gone", "[pool]")
{
    const Fixture fixture;
    SideDaemon daemon("pool-ssh", only_over_ssh(ssh_entry(fixture), json::object{{"box_expiry_s", 4},
                                                                                  {"settle_after_expiry_s", 1},
                                                                                  {"sweep_interval_s", 1}}));
    REQUIRE(daemon.pybox({"vm", "start"}).exit_code == 0);
    auto client = std::async(std::launch::async, [&daemon] {
        return daemon.try_pybox({"exec", "-", "--json", "--timeout", "10"}, "import time\ntime.sleep(8)\nprint('done')\n");
    });
    std::vector<std::string> boxes;
    REQUIRE(within(std::chrono::seconds(15), [&] { return !(boxes = labelled_boxes_on(engine2_socket(fixture), daemon.home())).empty(); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    fixture.kill_sshd();
    const auto ended = client.get();
    REQUIRE(ended.has_value());
    INFO(ended->output << ended->error_output);
    // The end was not observed: exit 125 with a receipt that says the engine was lost mid-run
    // and that the box's removal is still to be confirmed.
    CHECK(ended->exit_code == 125);
    CHECK_THAT(ended->output, Catch::Contains("\"mechanism\":\"ENGINE_LOST\"") && Catch::Contains("REMOVAL_UNCONFIRMED") &&
                                  Catch::Contains("ENGINE_GONE"));

    fixture.restart_sshd();
    // The box's own timer ends it; the run service or the sweep on that engine removes it once
    // the session is back, and the run is settled.
    CHECK(within(std::chrono::seconds(30), [&] {
        daemon.pybox({"vm", "status"});
        return labelled_boxes_on(engine2_socket(fixture), daemon.home()).empty();
    }));
    const auto again = daemon.run_json("print(6*7)\n");
    CHECK(again.process.exit_code == 0);
    CHECK(again.receipt.at("engine").at("id") == "far");
}
