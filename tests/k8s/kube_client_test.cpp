// The Kubernetes client (daemon/kube/) against the real test cluster (tests/k8s/cluster_up.sh,
// the ctest fixture k8s): the kubeconfigs it wrote, /version, the namespace check, the admin's
// and the nobody user's access reviews, the kubelet's podPidsLimit through the node proxy, and an
// attach round trip through a sealed Pod whose first process reads a length-prefixed program.
// It needs $PYBOX_K8S_HOME/cluster.env and fails without it: it never skips.
#include "daemon/kube/attach_channels.hpp"
#include "daemon/kube/cluster_probe.hpp"
#include "daemon/kube/kube_attach.hpp"
#include "daemon/kube/kube_client.hpp"
#include "daemon/kube/kubeconfig.hpp"
#include "proto/box_policy.hpp"
#include "tests/support/cluster_env.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <random>
#include <thread>

using namespace pybox;
using namespace pybox::kube;
using namespace std::chrono_literals;

namespace {

const std::string& env(const std::string& key) { return test::cluster_env(key); }

template <class T>
T run(boost::asio::awaitable<T> call)
{
    boost::asio::io_context io;
    std::optional<T> result;
    boost::asio::co_spawn(
        io, [&]() -> boost::asio::awaitable<void> { result.emplace(co_await std::move(call)); }, boost::asio::detached);
    io.run();
    REQUIRE(result.has_value());
    return std::move(*result);
}

std::unique_ptr<KubeClient> client_of(const std::string& kubeconfig_key)
{
    auto access = read_kubeconfig(env(kubeconfig_key), std::nullopt);
    INFO((access ? std::string() : access.error().message));
    REQUIRE(access.has_value());
    auto client = KubeClient::make(std::move(*access));
    INFO((client ? std::string() : client.error().message));
    REQUIRE(client.has_value());
    return std::move(*client);
}

std::string problems_text(const ClusterReport& report)
{
    std::string text;
    for (const auto& problem : report.problems) text += problem.check + ": " + problem.message + "\n";
    return text;
}

// The test's in-Pod reader (the backend will have its own): a length-prefixed program on stdin,
// run with its byte count read first, since attach v4 cannot close stdin.
constexpr const char* k_reader =
    "import sys\n"
    "n = int(sys.stdin.buffer.readline())\n"
    "exec(compile(sys.stdin.buffer.read(n), '<program>', 'exec'), {'__name__': '__main__'})\n";

// The sealed Pod (tests/k8s/sealed_pod.py has the same), its first process the reader.
json::value sealed_pod(const std::string& name)
{
    const json::object resources{{"memory", "128Mi"}, {"cpu", "500m"}};
    json::object container{
        {"name", "main"},
        {"image", env("K8S_TEST_IMAGE")},
        {"imagePullPolicy", "IfNotPresent"},
        {"command", json::array{"python3", "-I", "-B", "-u", "-c", k_reader}},
        {"stdin", true},
        {"stdinOnce", true},
        {"securityContext", json::object{{"readOnlyRootFilesystem", true},
                                         {"allowPrivilegeEscalation", false},
                                         {"capabilities", json::object{{"drop", json::array{"ALL"}}}}}},
        {"resources", json::object{{"requests", resources}, {"limits", resources}}},
        {"volumeMounts", json::array{json::object{{"name", "tmp"}, {"mountPath", "/tmp"}}}},
    };
    json::object spec{
        {"nodeName", env("K8S_NODE")},
        {"securityContext", json::object{{"runAsUser", 10000}, {"runAsGroup", 10000}, {"runAsNonRoot", true},
                                         {"seccompProfile", json::object{{"type", "Localhost"},
                                                                           {"localhostProfile", env("K8S_SECCOMP_PROFILE")}}}}},
        {"containers", json::array{container}},
        {"volumes", json::array{json::object{
                        {"name", "tmp"}, {"emptyDir", json::object{{"medium", "Memory"}, {"sizeLimit", "16Mi"}}}}}},
        {"automountServiceAccountToken", false},
        {"enableServiceLinks", false},
        {"restartPolicy", "Never"},
        {"terminationGracePeriodSeconds", 0},
        {"activeDeadlineSeconds", 60},
    };
    return json::object{{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", json::object{{"name", name}, {"labels", json::object{{"pybox.test", "kube-client"}}}}},
                        {"spec", std::move(spec)}};
}

std::string pod_path(const std::string& name) { return "/api/v1/namespaces/" + env("K8S_NAMESPACE") + "/pods/" + name; }

// The Pod as the API has it, polled until `done` says so (or 60 s).
template <class Done>
json::value wait_for_pod(KubeClient& client, const std::string& name, Done done)
{
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    for (;;) {
        auto pod = run(client.call_json(http::verb::get, pod_path(name), nullptr, 5s));
        INFO((pod ? std::string() : pod.error().message));
        REQUIRE(pod.has_value());
        if (done(*pod)) return *pod;
        REQUIRE(std::chrono::steady_clock::now() < give_up);
        std::this_thread::sleep_for(100ms);
    }
}

const json::object* container_state(const json::value& pod)
{
    const auto* status = pod.at("status").as_object().if_contains("containerStatuses");
    if (status == nullptr || !status->is_array() || status->as_array().empty()) return nullptr;
    return &status->as_array().at(0).at("state").as_object();
}

// What an attach to the Pod saw: its protocol, the output of each stream, the status channel's
// Status, or the first failure.
struct Attached {
    std::string failure;
    AttachProtocol protocol = AttachProtocol::v5;
    bool close_stdin_refused = false;
    std::string out;
    std::string err;
    std::optional<AttachStatus> status;
};

// Attaches, delivers `program` length-prefixed, and reads until the stream ends: one coroutine,
// since the session's connection belongs to the io_context it was opened on.
boost::asio::awaitable<Attached> attach_and_deliver(KubeClient& client, const std::string& pod, const std::string& program)
{
    Attached attached;
    auto session = co_await AttachSession::open(client, env("K8S_NAMESPACE"), pod, "main", 10s);
    if (!session) {
        attached.failure = session.error().message;
        co_return attached;
    }
    attached.protocol = (*session)->protocol();
    attached.close_stdin_refused = !(co_await (*session)->close_stdin(1s));
    if (auto written = co_await (*session)->write_stdin(proto::fed_program_frame(program), 5s); !written) {
        attached.failure = written.error().message;
        co_return attached;
    }
    for (;;) {
        auto chunk = co_await (*session)->read(30s);
        if (!chunk) {
            attached.failure = chunk.error().message;
            co_return attached;
        }
        if (!chunk->has_value()) break;
        ((*chunk)->stream == OutputStream::stdout_stream ? attached.out : attached.err) += (*chunk)->bytes;
    }
    auto status = (*session)->status();
    if (!status) {
        attached.failure = status.error().message;
        co_return attached;
    }
    attached.status = *status;
    co_return attached;
}

}  // namespace

TEST_CASE("The test cluster's kubeconfigs are read: the admin's and the nobody user's client certificates", "[k8s]")
{
    for (const char* key : {"K8S_ADMIN_KUBECONFIG", "K8S_NOBODY_KUBECONFIG"}) {
        auto access = read_kubeconfig(env(key), std::nullopt);
        INFO(key << ": " << (access ? std::string() : access.error().message));
        REQUIRE(access.has_value());
        CHECK(access->server.url == env("K8S_SERVER"));
        CHECK_FALSE(access->client_cert_pem.empty());
        CHECK(access->token.empty());
    }
}

TEST_CASE("The admin finds the apiserver at 1.20, the namespace, and every permission the backend needs", "[k8s]")
{
    auto client = client_of("K8S_ADMIN_KUBECONFIG");
    const auto report = run(check_cluster(*client, env("K8S_NAMESPACE"), 5s));
    INFO(problems_text(report));
    CHECK(report.problems.empty());
    REQUIRE(report.version.has_value());
    CHECK(report.version->major == 1);
    CHECK(report.version->minor == 20);
    CHECK(report.version->git_version.rfind("v1.20.", 0) == 0);
}

TEST_CASE("A namespace that does not exist is the namespace problem", "[k8s]")
{
    auto client = client_of("K8S_ADMIN_KUBECONFIG");
    const auto report = run(check_cluster(*client, "pybox-no-such-namespace", 5s));
    REQUIRE(report.problems.size() == 1);
    CHECK((report.problems[0] == ClusterProblem{"namespace", "The namespace \"pybox-no-such-namespace\" does not exist; "
                                                            "create it, or name another in the engine entry."}));
}

TEST_CASE("The nobody user's checks name every permission it lacks, one problem each", "[k8s]")
{
    auto client = client_of("K8S_NOBODY_KUBECONFIG");
    const auto report = run(check_cluster(*client, env("K8S_NAMESPACE"), 5s));
    INFO(problems_text(report));
    REQUIRE(report.version.has_value());
    REQUIRE(report.problems.size() == 1 + backend_access_needs().size());
    CHECK(report.problems[0].check == "namespace");
    CHECK_THAT(report.problems[0].message, Catch::Contains("may not read the namespace"));
    for (std::size_t i = 0; i < backend_access_needs().size(); ++i) {
        const auto& problem = report.problems[1 + i];
        CHECK(problem.check == "access");
        CHECK_THAT(problem.message, Catch::Contains(" may not " + describe_need(backend_access_needs()[i]) + " "));
        CHECK_THAT(problem.message, Catch::Contains("\"" + client->access().user + "\""));
    }
}

TEST_CASE("The node's podPidsLimit is read from the kubelet's configz through the node proxy", "[k8s]")
{
    auto client = client_of("K8S_ADMIN_KUBECONFIG");
    auto limit = run(read_pod_pids_limit(*client, env("K8S_NODE"), 5s));
    INFO((limit ? std::string() : limit.error().message));
    REQUIRE(limit.has_value());
    // tests/k8s/cluster_up.sh configures the kubelet with PYBOX_K8S_POD_PIDS_LIMIT, 32 by default.
    const char* configured = std::getenv("PYBOX_K8S_POD_PIDS_LIMIT");
    CHECK(*limit == std::optional<std::int64_t>(configured ? std::atoll(configured) : 32));

    auto nobody = client_of("K8S_NOBODY_KUBECONFIG");
    auto refused = run(read_pod_pids_limit(*nobody, env("K8S_NODE"), 5s));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "engine_error");
    CHECK_THAT(refused.error().message, Catch::Contains("403 Forbidden (Forbidden)") && Catch::Contains("nodes/proxy"));
}

TEST_CASE("An attached sealed Pod gets a length-prefixed program and gives stdout and stderr apart; its exit code 3 comes from the Pod status", "[k8s]")
{
    auto client = client_of("K8S_ADMIN_KUBECONFIG");
    const std::string name = "kube-client-attach-" + std::to_string(std::random_device()() % 1000000);
    // Pods an earlier, interrupted run of this test left go first.
    auto swept = run(client->call(http::verb::delete_, "/api/v1/namespaces/" + env("K8S_NAMESPACE") +
                                                           "/pods?labelSelector=pybox.test%3Dkube-client&gracePeriodSeconds=0",
                                  nullptr, 5s));
    REQUIRE(swept.has_value());
    CHECK(swept->status == 200);
    const auto pod = sealed_pod(name);
    const auto started = std::chrono::steady_clock::now();
    auto created = run(client->call_json(http::verb::post, "/api/v1/namespaces/" + env("K8S_NAMESPACE") + "/pods", &pod, 5s));
    INFO((created ? std::string() : created.error().message));
    REQUIRE(created.has_value());

    wait_for_pod(*client, name, [](const json::value& p) {
        const auto* state = container_state(p);
        return state != nullptr && (state->contains("running") || state->contains("terminated"));
    });
    const std::string program = "import sys\nprint(6*7)\nprint('to-stderr', file=sys.stderr)\nsys.exit(3)\n";
    const auto attached = run(attach_and_deliver(*client, name, program));
    const auto output_done = std::chrono::steady_clock::now();
    INFO(attached.failure);
    REQUIRE(attached.failure.empty());
    CHECK(attached.protocol == AttachProtocol::v4);  // Kubernetes 1.20 has no v5
    CHECK(attached.close_stdin_refused);
    CHECK(attached.out == "42\n");
    CHECK(attached.err == "to-stderr\n");
    // Attach's status channel says Success even for exit code 3 (measured), when it says anything.
    if (attached.status) CHECK(attached.status->success);

    const auto ended = wait_for_pod(*client, name, [](const json::value& p) {
        const auto* state = container_state(p);
        return state != nullptr && state->contains("terminated");
    });
    CHECK(container_state(ended)->at("terminated").at("exitCode") == 3);
    CHECK(ended.at("status").at("phase") == "Failed");
    WARN("POST to output complete: "
         << std::chrono::duration_cast<std::chrono::milliseconds>(output_done - started).count() << " ms");

    const json::value delete_options = json::object{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"gracePeriodSeconds", 0}};
    auto deleted = run(client->call_json(http::verb::delete_, pod_path(name), &delete_options, 5s));
    INFO((deleted ? std::string() : deleted.error().message));
    REQUIRE(deleted.has_value());
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    for (;;) {
        auto reply = run(client->call(http::verb::get, pod_path(name), nullptr, 5s));
        REQUIRE(reply.has_value());
        if (reply->status == 404) break;
        REQUIRE(std::chrono::steady_clock::now() < give_up);
        std::this_thread::sleep_for(100ms);
    }
}

TEST_CASE("Attaching to a Pod that does not exist is engine_no_such_object, naming the Pod", "[k8s]")
{
    auto client = client_of("K8S_ADMIN_KUBECONFIG");
    auto session = run(AttachSession::open(*client, env("K8S_NAMESPACE"), "kube-client-no-such-pod", "main", 5s));
    REQUIRE_FALSE(session.has_value());
    CHECK(session.error().code == "engine_no_such_object");
    CHECK_THAT(session.error().message, Catch::Contains("kube-client-no-such-pod"));
}
