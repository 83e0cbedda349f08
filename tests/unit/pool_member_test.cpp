// Every engine's stack (daemon/pool/pool_member.hpp) and the pool's services over them
// (pool_services.hpp): what the factory decides for the local engine and each config.json
// "engines" entry, the image check and the recorded images every engine shares. Nothing here
// reaches an engine but the fake one.
#include "daemon/pool/pool_member.hpp"
#include "daemon/pool/pool_services.hpp"
#include "daemon/run/run_watch.hpp"
#include "tests/support/docker_backend_fixture.hpp"
#include "tests/support/temp_runtime.hpp"

#include "common/files.hpp"
#include "common/sha256.hpp"

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <list>
#include <string>

using namespace pybox;
using daemon::PoolMember;
namespace net = boost::asio;

namespace {

const std::string k_image_id = "sha256:" + std::string(64, 'c');

engine::EngineEntry unix_entry(std::string id, std::string socket)
{
    return {std::move(id), engine::UnixSocketEngine{std::move(socket)}};
}

engine::EngineEntry ssh_entry(std::string id)
{
    engine::SshEngine where;
    where.address = {"pybox", "far.example", 2222};
    where.engine_socket = "/run/docker.sock";
    where.identity_file = "/nonexistent/id_ed25519";
    where.host_key_sha256 = "SHA256:" + std::string(43, 'A');
    return {std::move(id), where};
}

// What the daemon gives the factory, in a runtime folder of the test's own.
struct Wiring {
    net::io_context io;
    test::TempRuntime runtime;
    config::DaemonConfig config;
    std::string installation_id = "0123456789abcdef";
    images::ImageRegistry registry{runtime.paths};
    daemon::RunsInProgress runs_in_progress;
    std::string watch_script = "echo watching";
    daemon::WarmSetup warm{2, 1000};
    daemon::ProcessEnds process_ends{nullptr, "not read in this test"};

    daemon::PoolContext context()
    {
        return {runtime.paths, config, installation_id, registry, runs_in_progress, watch_script, process_ends, {}, warm};
    }
    std::list<PoolMember> members()
    {
        auto made = daemon::make_pool_members(io.get_executor(), context());
        REQUIRE(made.has_value());
        return std::move(*made);
    }
};

// The local engine's images, for the pool's image service; never called here.
class UnusedImages final : public daemon::ImageService {
public:
    net::awaitable<Expected<proto::SetupAnswer>> setup(std::vector<std::string>, bool) override
    {
        co_return make_error("unused", "not in this test");
    }
    net::awaitable<Expected<proto::ImageList>> list() override { co_return make_error("unused", "not in this test"); }
    net::awaitable<Expected<proto::SetupAnswer>> build_own(std::string, std::string) override
    {
        co_return make_error("unused", "not in this test");
    }
    net::awaitable<Expected<proto::ImageList>> remove_own(std::string) override
    {
        co_return make_error("unused", "not in this test");
    }
    proto::SetupProgress progress() override { return {}; }
};

images::ImageRecord record_of(std::string name, std::string image_id, std::string recipe_sha256 = std::string(64, 'b'))
{
    return images::ImageRecord{std::move(name), std::move(image_id), std::move(recipe_sha256), "2026-01-01T00:00:00Z",
                               std::string(64, 'd')};
}

}  // namespace

TEST_CASE("Without engines entries the daemon has one member: the local engine, on the configured socket")
{
    Wiring wiring;
    wiring.config.engine_socket = "/run/user-engine.sock";
    const auto members = wiring.members();
    REQUIRE(members.size() == 1);
    const auto& local = members.front();
    CHECK(local.id() == engine::k_local_engine_id);
    CHECK(local.address() == "unix:///run/user-engine.sock");
    CHECK(local.takes_runs());
}

TEST_CASE("Without engine_socket the local engine is PyBox's private engine, in the runtime folder")
{
    Wiring wiring;
    const auto members = wiring.members();
    CHECK(members.front().address() == "unix://" + config::engine_socket_path(wiring.config, wiring.runtime.paths).string());
}

TEST_CASE("The entries of config.json follow the local engine in their order, each with its id and address")
{
    Wiring wiring;
    wiring.config.engines = {unix_entry("near", "/run/near.sock"), ssh_entry("far"), unix_entry("next", "/run/next.sock")};
    const auto members = wiring.members();
    std::vector<std::string> ids;
    for (const auto& member : members) ids.push_back(member.id());
    CHECK(ids == std::vector<std::string>{"local", "near", "far", "next"});
    auto far = std::next(members.begin(), 2);
    CHECK(std::next(members.begin())->address() == "unix:///run/near.sock");
    CHECK(far->address() == "ssh://pybox@far.example:2222 (engine socket /run/docker.sock)");
    for (const auto& member : members) CHECK(member.takes_runs());
}

TEST_CASE("Every engine keeps the daemon's warm boxes while the local engine takes runs")
{
    Wiring wiring;
    wiring.config.engines = {unix_entry("near", "/run/near.sock")};
    for (const auto& member : wiring.members()) {
        INFO(member.id());
        CHECK(member.warm().count == 2);
        CHECK(member.warm().owner_uid == 1000);
    }
}

TEST_CASE("With local_engine false the local engine takes no runs and keeps no warm boxes; the entries keep theirs")
{
    Wiring wiring;
    wiring.config.local_engine = false;
    wiring.config.engines = {unix_entry("near", "/run/near.sock")};
    const auto members = wiring.members();
    CHECK_FALSE(members.front().takes_runs());
    CHECK(members.front().warm().count == 0);
    CHECK(members.back().takes_runs());
    CHECK(members.back().warm().count == 2);
}

TEST_CASE("With the watcher on, each engine's runs are watched through its own host; a unix entry's is this host, naming it")
{
    Wiring wiring;
    wiring.config.engines = {unix_entry("near", "/run/near.sock"), ssh_entry("far")};
    const auto members = wiring.members();
    for (const auto& member : members) {
        INFO(member.id());
        REQUIRE(member.cgroups() != nullptr);
        CHECK(member.watch().host == member.cgroups());
        CHECK(member.watch().script == "echo watching");
        CHECK_FALSE(member.check_at_start());
    }
    const auto& local = members.front();
    const auto& near = *std::next(members.begin());
    CHECK(local.cgroups()->describe() == "this host (local cgroup files)");
    CHECK_FALSE(local.cgroups_elsewhere());
    CHECK(near.cgroups()->describe() == "this host (local cgroup files; engine near is a unix socket on this host)");
    CHECK_FALSE(near.cgroups_elsewhere());
    CHECK(members.back().cgroups_elsewhere());
}

TEST_CASE("With the watcher off no run is watched, saying so; only the local engine keeps its host, to release run parents")
{
    Wiring wiring;
    wiring.config.watcher = false;
    wiring.config.engines = {unix_entry("near", "/run/near.sock")};
    const auto members = wiring.members();
    for (const auto& member : members) {
        INFO(member.id());
        CHECK(member.watch().host == nullptr);
        CHECK(member.watch().off_reason == daemon::k_watcher_off_in_config);
    }
    CHECK(members.front().cgroups() != nullptr);
    CHECK(members.back().cgroups() == nullptr);
}

TEST_CASE("The pool's engines are the members in order, the local one taking runs as config.json says")
{
    Wiring wiring;
    wiring.config.local_engine = false;
    wiring.config.engines = {unix_entry("near", "/run/near.sock"), unix_entry("next", "/run/next.sock")};
    auto members = wiring.members();
    UnusedImages images;
    const daemon::PoolServices services(members, images, wiring.registry, wiring.runtime.paths.build_dir());
    const auto engines = services.pool().describe();
    REQUIRE(engines.size() == 3);
    CHECK(engines[0].id == "local");
    CHECK_FALSE(engines[0].takes_runs);
    CHECK(engines[1].id == "near");
    CHECK(engines[1].address == "unix:///run/near.sock");
    CHECK(engines[1].takes_runs);
    CHECK(engines[2].id == "next");
    for (const auto& engine : engines) CHECK_FALSE(engine.verified);  // not checked yet
}

TEST_CASE("recorded_images names each image of images.json with its image ID")
{
    Wiring wiring;
    REQUIRE(wiring.registry.put(record_of("stdlib", k_image_id)).has_value());
    REQUIRE(wiring.registry.put(record_of("data", "sha256:" + std::string(64, 'e'))).has_value());
    const auto recorded = daemon::recorded_images(wiring.registry)();
    REQUIRE(recorded.has_value());
    REQUIRE(recorded->size() == 2);
    CHECK((*recorded)[0].name == "stdlib");
    CHECK((*recorded)[0].image_id == k_image_id);
    CHECK((*recorded)[1].name == "data");
    CHECK((*recorded)[1].image_id == "sha256:" + std::string(64, 'e'));
}

TEST_CASE("recorded_images fails as the registry does when images.json is damaged")
{
    Wiring wiring;
    REQUIRE(write_file_atomic(wiring.runtime.paths.images_file(), "{not json").has_value());
    const auto recorded = daemon::recorded_images(wiring.registry)();
    REQUIRE_FALSE(recorded.has_value());
    CHECK(recorded.error().code == "images_file_invalid");
}

TEST_CASE("The image check refuses an image that is not built without asking the engine")
{
    test::DockerBackendFixture docker;
    test::TempRuntime runtime;
    const images::ImageRegistry registry(runtime.paths);
    const auto checked = docker.run(daemon::image_check(registry, docker.backend)("stdlib"));
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == "image_not_built");
    CHECK(docker.engine->requests().empty());
}

TEST_CASE("The image check answers the recorded image's ID and recipe when the engine holds that image")
{
    test::DockerBackendFixture docker;
    test::TempRuntime runtime;
    const images::ImageRegistry registry(runtime.paths);
    const std::string spec = "the recipe and lock of stdlib";
    std::filesystem::create_directories(registry.spec_file("stdlib").parent_path());
    REQUIRE(write_file_atomic(registry.spec_file("stdlib"), spec).has_value());
    REQUIRE(registry.put(record_of("stdlib", k_image_id, sha256_hex(spec))).has_value());
    docker.engine->on("GET", "/images/", {{test::http_response("200 OK", R"({"Id":")" + k_image_id + R"("})")}});
    const auto checked = docker.run(daemon::image_check(registry, docker.backend)("stdlib"));
    REQUIRE(checked.has_value());
    CHECK(checked->image_id == k_image_id);
    CHECK(checked->recipe_sha256 == sha256_hex(spec));
}
