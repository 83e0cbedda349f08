// The Kubernetes backend (daemon/kube/kube_backend.hpp) without a cluster: when it reads the
// entry's kubeconfig and what it keeps of it. Nothing here reaches an apiserver.
#include "daemon/kube/kube_backend.hpp"
#include "tests/support/scripted_model_server.hpp"
#include "tests/support/temp_runtime.hpp"

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
            runtime.paths.pushed_images_file("kube"),
            [] { return Expected<std::vector<vm::RecordedImage>>(std::vector<vm::RecordedImage>{}); });
    }

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
