// The Kubernetes backend (daemon/kube/kube_backend.hpp) without a cluster: when it reads the
// entry's kubeconfig and its record of pushed images, and what it keeps of them. Nothing here
// reaches an apiserver or a registry.
#include "daemon/kube/kube_backend.hpp"
#include "daemon/registry/pushed_images.hpp"
#include "tests/support/fake_engine.hpp"
#include "tests/support/scripted_model_server.hpp"
#include "tests/support/temp_runtime.hpp"

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace pybox;
using kube::KubeBackend;

namespace {

const std::string k_registry = "registry.test:5000/pybox";

// A kubernetes entry whose kubeconfig is "kubeconfig" in the test's own runtime folder.
struct Cluster {
    test::TempRuntime runtime;
    std::filesystem::path kubeconfig = runtime.root / "kubeconfig";

    std::unique_ptr<KubeBackend> make_backend() const
    {
        engine::KubeEngine entry;
        entry.kubeconfig = kubeconfig;
        entry.namespace_name = "pybox-test";
        entry.image_registry = k_registry;
        return std::make_unique<KubeBackend>(
            "kube", entry,
            pushed_images_file(),
            [] { return Expected<std::vector<vm::RecordedImage>>(std::vector<vm::RecordedImage>{}); });
    }

    std::filesystem::path pushed_images_file() const { return runtime.paths.pushed_images_file("kube"); }

    // A kubeconfig of an apiserver at https://127.0.0.1:6443 with a token; its CA is `ca`.
    void write_kubeconfig(const std::filesystem::path& ca = test::TestPki::get().ca()) const
    {
        std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
                                     "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n"
                                     "    certificate-authority: " + ca.string() + "\n"
                                     "users:\n- name: u\n  user:\n    token: t0k3n\n"
                                     "contexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\n";
    }
};

// The record of the image sha256:<image_hex...> pushed as stdlib to `registry`.
registry::PushedRecord pushed_stdlib(char image_hex, const std::string& registry)
{
    const std::string manifest_digest = "sha256:" + std::string(64, 'e');
    return {"stdlib", "sha256:" + std::string(64, image_hex), registry + "/stdlib@" + manifest_digest, manifest_digest,
            "2026-01-01T00:00:00.000000Z"};
}

void write_pushed(const std::filesystem::path& file, const std::vector<registry::PushedRecord>& records)
{
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << registry::serialize_pushed_images(records);
}

Expected<void> remove_image(KubeBackend& backend, const std::string& image_id)
{
    boost::asio::io_context io;
    return test::run_to_result(io, backend.remove_image(image_id));
}

}  // namespace

TEST_CASE("A kube backend reads its kubeconfig once: the client is made of what was read when it was made")
{
    Cluster cluster;
    cluster.write_kubeconfig();
    auto backend = cluster.make_backend();
    std::filesystem::remove(cluster.kubeconfig);  // gone once the backend has read it
    CHECK(backend->describe() == "kubernetes https://127.0.0.1:6443 namespace pybox-test");
    auto client = backend->client();
    REQUIRE(client.has_value());
    CHECK((*client)->access().token == "t0k3n");
    CHECK(backend->client().value() == *client);
}

TEST_CASE("A kube backend whose kubeconfig could not be read reads it again at each need, until it can")
{
    Cluster cluster;
    auto backend = cluster.make_backend();  // no kubeconfig there yet
    CHECK(backend->describe() == "kubernetes (kubeconfig " + cluster.kubeconfig.string() + ") namespace pybox-test");
    auto missing = backend->client();
    REQUIRE_FALSE(missing.has_value());
    CHECK_THAT(missing.error().message, Catch::Contains(cluster.kubeconfig.string()));

    cluster.write_kubeconfig();
    auto client = backend->client();
    REQUIRE(client.has_value());
    CHECK((*client)->access().server.url == "https://127.0.0.1:6443");
}

TEST_CASE("A kube backend whose kubeconfig was read but makes no client reads it again at the next need")
{
    Cluster cluster;
    const auto not_a_ca = cluster.runtime.root / "not-a-ca.pem";
    std::ofstream(not_a_ca) << "not a certificate\n";
    cluster.write_kubeconfig(not_a_ca);
    auto backend = cluster.make_backend();
    auto refused = backend->client();
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "kubeconfig_invalid");

    cluster.write_kubeconfig();  // fixed: it names the test CA
    CHECK(backend->client().has_value());
}

TEST_CASE("A kube backend loads its record of pushed images once and answers from it")
{
    Cluster cluster;
    const auto stdlib = pushed_stdlib('a', k_registry);
    write_pushed(cluster.pushed_images_file(), {stdlib});
    auto backend = cluster.make_backend();
    auto image = backend->cluster_image(stdlib.image_id);
    REQUIRE(image.has_value());
    CHECK(image->reference == stdlib.reference);
    CHECK(image->manifest_digest == stdlib.manifest_digest);

    std::filesystem::remove(cluster.pushed_images_file());  // not read again
    CHECK(backend->cluster_image(stdlib.image_id).has_value());
    CHECK_FALSE(backend->cluster_image("sha256:" + std::string(64, 'b')).has_value());
}

TEST_CASE("A kube backend counts only the pushed images recorded under the entry's current registry")
{
    Cluster cluster;
    const auto here = pushed_stdlib('a', k_registry);
    const auto elsewhere = pushed_stdlib('b', "127.0.0.1:5000/pybox");
    write_pushed(cluster.pushed_images_file(), {here, elsewhere});
    auto backend = cluster.make_backend();
    CHECK(backend->cluster_image(here.image_id).has_value());
    CHECK_FALSE(backend->cluster_image(elsewhere.image_id).has_value());
}

TEST_CASE("A kube backend forgets a removed image in its kept record and in the file")
{
    Cluster cluster;
    const auto kept = pushed_stdlib('a', k_registry);
    const auto removed = pushed_stdlib('b', k_registry);
    write_pushed(cluster.pushed_images_file(), {kept, removed});
    auto backend = cluster.make_backend();
    REQUIRE(backend->cluster_image(removed.image_id).has_value());

    REQUIRE(remove_image(*backend, removed.image_id).has_value());
    CHECK_FALSE(backend->cluster_image(removed.image_id).has_value());
    CHECK(backend->cluster_image(kept.image_id).has_value());
    auto on_disk = registry::PushedImages::load(cluster.pushed_images_file());
    REQUIRE(on_disk.has_value());
    CHECK(on_disk->records() == std::vector<registry::PushedRecord>{kept});
}

TEST_CASE("A kube backend whose record of pushed images cannot be loaded loads it again at each need")
{
    Cluster cluster;
    std::filesystem::create_directories(cluster.pushed_images_file().parent_path());
    std::ofstream(cluster.pushed_images_file()) << "{damaged";
    auto backend = cluster.make_backend();
    const auto stdlib = pushed_stdlib('a', k_registry);
    CHECK_FALSE(backend->cluster_image(stdlib.image_id).has_value());
    auto refused = remove_image(*backend, stdlib.image_id);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "pushed_images_invalid");

    write_pushed(cluster.pushed_images_file(), {stdlib});  // moved away and pushed again
    CHECK(backend->cluster_image(stdlib.image_id).has_value());
}
