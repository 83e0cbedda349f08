// The backends of config.json's engines (daemon/engine/backend_factory.hpp, engine_backend.hpp):
// what the factory makes from an entry's kind, and what the Docker backend answers of its image
// check, image copy and image removal. Nothing here reaches an engine but the fake one.
#include "daemon/engine/backend_factory.hpp"
#include "daemon/engine/docker_backend.hpp"
#include "daemon/pool/pool_member.hpp"
#include "daemon/vm/private_engine.hpp"
#include "tests/support/docker_backend_fixture.hpp"
#include "tests/support/temp_runtime.hpp"

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

using namespace pybox;
using engine::DockerBackend;
using engine::EngineBackend;
using images::EngineImageState;
namespace net = boost::asio;

namespace {

const std::string k_image_id = "sha256:" + std::string(64, 'c');
const std::string k_image_in_url = "sha256%3A" + std::string(64, 'c');

images::ImageRecord record_of(std::string image_id)
{
    return images::ImageRecord{"stdlib", std::move(image_id), std::string(64, 'b'), "2026-01-01T00:00:00Z",
                               std::string(64, 'd')};
}

// What the daemon gives the factory, in a runtime folder of the test's own.
struct Factory {
    net::io_context io;
    test::TempRuntime runtime;
    config::DaemonConfig config;
    std::string installation_id = "0123456789abcdef";

    engine::MadeBackend make(const engine::EngineEntry& entry)
    {
        auto made = engine::make_backend(
            io.get_executor(), entry,
            engine::BackendContext{runtime.paths, installation_id, config,
                                   [] { return Expected<std::vector<vm::RecordedImage>>(std::vector<vm::RecordedImage>{}); }});
        REQUIRE(made.has_value());
        REQUIRE(made->backend != nullptr);
        return std::move(*made);
    }
};

// A backend that delegates to another but cannot keep warm boxes, as a backend may say.
class NoWarmBoxes final : public EngineBackend {
public:
    explicit NoWarmBoxes(EngineBackend& inner) : m_inner(inner) {}
    std::string describe() const override { return m_inner.describe(); }
    engine::BoxEngine& boxes() override { return m_inner.boxes(); }
    engine::EngineProbe& probe() override { return m_inner.probe(); }
    daemon::EngineControl& control() override { return m_inner.control(); }
    net::awaitable<Expected<EngineImageState>> image_state(const images::ImageRecord& record) override
    {
        return m_inner.image_state(record);
    }
    net::awaitable<std::vector<std::string>> receive_images(engine::EngineClient& builder,
                                                            std::vector<vm::RecordedImage> images,
                                                            std::filesystem::path work_dir) override
    {
        return m_inner.receive_images(builder, std::move(images), std::move(work_dir));
    }
    net::awaitable<Expected<void>> remove_image(const std::string& image_id) override
    {
        return m_inner.remove_image(image_id);
    }
    bool keeps_warm_boxes() const override { return false; }

private:
    EngineBackend& m_inner;
};

}  // namespace

TEST_CASE("A docker entry on a unix socket gets a Docker backend on it, checked as an engine_socket engine, watched here")
{
    Factory factory;
    const auto made = factory.make({"near", engine::UnixSocketEngine{"/run/near.sock"}, engine::EngineKind::docker});
    CHECK(made.backend->describe() == "unix:///run/near.sock");
    CHECK(dynamic_cast<DockerBackend*>(made.backend.get()) != nullptr);
    // Its checks are those of an engine PyBox never starts or stops.
    CHECK(dynamic_cast<vm::PrivateEngine*>(&made.backend->control()) != nullptr);
    CHECK(made.backend->keeps_warm_boxes());
    REQUIRE(made.cgroups != nullptr);
    CHECK(made.cgroups->describe() == "this host (local cgroup files; engine near is a unix socket on this host)");
    CHECK_FALSE(made.cgroups_elsewhere);
}

TEST_CASE("A docker entry over ssh gets a Docker backend through one session, watched on that host")
{
    Factory factory;
    engine::SshEngine where;
    where.address = {"pybox", "far.example", 2222};
    where.engine_socket = "/run/docker.sock";
    where.identity_file = "/nonexistent/id_ed25519";
    where.host_key_sha256 = "SHA256:" + std::string(43, 'A');
    const auto made = factory.make({"far", where, engine::EngineKind::docker});
    CHECK(made.backend->describe() == "ssh://pybox@far.example:2222 (engine socket /run/docker.sock)");
    CHECK(dynamic_cast<vm::PrivateEngine*>(&made.backend->control()) != nullptr);
    REQUIRE(made.cgroups != nullptr);
    CHECK(made.cgroups_elsewhere);
}

TEST_CASE("A Docker backend's checks are made over its own client, once")
{
    test::DockerBackendFixture docker;
    REQUIRE(docker.control != nullptr);
    CHECK(&docker.backend.control() == docker.control);
    CHECK(docker.control->asked == 0);  // making a backend asks nothing
    CHECK(docker.engine->requests().empty());
    CHECK_THROWS_AS(DockerBackend(docker.io.get_executor(), std::make_unique<test::FakeEngine>(docker.io),
                                  [](engine::EngineClient&) { return std::unique_ptr<daemon::EngineControl>(); }, "runc"),
                    std::logic_error);
}

TEST_CASE("A Docker backend finds a recorded image present under its ID, missing on 404, different under another ID")
{
    test::DockerBackendFixture docker;
    docker.engine->on("GET", "/images/",
                      {{test::http_response("200 OK", R"({"Id":")" + k_image_id + R"("})")},
                       {test::http_response("404 Not Found", R"({"message":"No such image"})")},
                       {test::http_response("200 OK", R"({"Id":"sha256:)" + std::string(64, 'e') + R"("})")}});
    const auto present = docker.run(docker.backend.image_state(record_of(k_image_id)));
    const auto missing = docker.run(docker.backend.image_state(record_of(k_image_id)));
    const auto different = docker.run(docker.backend.image_state(record_of(k_image_id)));
    REQUIRE(present.has_value());
    CHECK(*present == EngineImageState::present);
    REQUIRE(missing.has_value());
    CHECK(*missing == EngineImageState::missing);
    REQUIRE(different.has_value());
    CHECK(*different == EngineImageState::different);
    CHECK(docker.engine->count("GET", "/images/" + k_image_in_url) == 3);
}

TEST_CASE("A Docker backend asks nothing when no image is recorded, and takes none while it does not answer")
{
    test::DockerBackendFixture builder;
    test::DockerBackendFixture docker;
    const auto none = docker.run(docker.backend.receive_images(builder.backend.client(), {}, "/nonexistent"));
    CHECK(none.empty());
    CHECK(docker.engine->requests().empty());

    docker.engine->on("GET", "/_ping", {test::respond("500 Internal Server Error", "down")});
    const auto notes =
        docker.run(docker.backend.receive_images(builder.backend.client(), {{"stdlib", k_image_id}}, "/nonexistent"));
    CHECK(notes.empty());  // its checks, which follow, say what it lacks
    CHECK(docker.engine->requests().size() == 1);
    CHECK(builder.engine->requests().empty());
}

TEST_CASE("A Docker backend removes an image by force, and one already gone counts as removed")
{
    test::DockerBackendFixture docker;
    docker.engine->on("DELETE", "/images/", {test::respond("404 Not Found", R"({"message":"No such image"})")});
    CHECK(docker.run(docker.backend.remove_image(k_image_id)).has_value());
    REQUIRE(docker.engine->received().size() == 1);
    CHECK(docker.engine->received()[0].method == "DELETE");
    CHECK(docker.engine->received()[0].target.find("/images/" + k_image_in_url + "?force=1") != std::string::npos);
}

TEST_CASE("An engine keeps the daemon's warm boxes only while it takes runs and its backend can keep them")
{
    test::DockerBackendFixture docker;
    const daemon::WarmSetup wanted{2, 1000};
    const auto kept = daemon::warm_setup_for(docker.backend, true, wanted);
    CHECK(kept.count == 2);
    CHECK(kept.owner_uid == 1000);
    CHECK(daemon::warm_setup_for(docker.backend, false, wanted).count == 0);
    NoWarmBoxes cold(docker.backend);
    const auto none = daemon::warm_setup_for(cold, true, wanted);
    CHECK(none.count == 0);
    CHECK(none.owner_uid == 1000);
}
