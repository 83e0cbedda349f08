// The Kubernetes backend through the real client and daemon on the real test cluster
// (tests/k8s/cluster_up.sh: Kubernetes 1.20, its node's dockerd, Debian's docker-registry): a
// second pyboxd whose local engine is the suite's (it builds and pushes the images) and whose
// only engine that takes runs is the cluster, in the namespace the fixture made. Needs the
// fixtures engine and k8s (ctest's integration_kube); tagged [kube] so the suite's other runs
// leave it out.
#include "common/files.hpp"
#include "common/process.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/cluster_env.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

json::object cluster_entry(const std::string& kubeconfig_key = "K8S_ADMIN_KUBECONFIG")
{
    return json::object{{"id", "cluster"},
                        {"kind", "kubernetes"},
                        {"kubeconfig", cluster_env(kubeconfig_key)},
                        {"namespace", cluster_env("K8S_NAMESPACE")},
                        {"image_registry", cluster_env("K8S_REGISTRY") + "/pybox"}};
}

json::object cluster_only(const json::object& entry)
{
    return json::object{{"engines", json::array{entry}}, {"local_engine", false}};
}

json::value answer_of(const ProcessResult& process)
{
    INFO("stdout: " << process.output << "\nstderr: " << process.error_output);
    boost::system::error_code ec;
    auto document = json::parse(process.output, ec);
    REQUIRE_FALSE(ec);
    return document;
}

json::object cluster_status(const json::value& answer)
{
    for (const auto& engine : answer.at("engines").as_array())
        if (engine.at("id") == "cluster") return engine.as_object();
    FAIL("no engine \"cluster\" in the answer");
    return {};
}

// `kubectl ARGS...` as the cluster's admin (tests/k8s/kubectl.sh); the output, requiring exit 0.
std::string kubectl(const std::vector<std::string>& args)
{
    std::vector<std::string> command{cluster_env("K8S_KUBECTL")};
    command.insert(command.end(), args.begin(), args.end());
    auto result = run_process(command);
    REQUIRE(result.has_value());
    INFO("kubectl stderr: " << result->error_output);
    REQUIRE(result->exit_code == 0);
    return result->output;
}

// The Pods in the test namespace that carry the daemon's run label `run_id`.
std::string pods_of_run(const std::string& run_id)
{
    return kubectl({"get", "pods", "-n", cluster_env("K8S_NAMESPACE"), "-l", "pybox.run=" + run_id, "-o", "name"});
}

// One daemon for the cases below: started once, its images pushed by `vm start`.
SideDaemon& cluster_daemon()
{
    static SideDaemon daemon("kube", cluster_only(cluster_entry()));
    static const bool started = [] {
        const auto start = daemon.pybox({"vm", "start", "--json"});
        INFO(start.output << start.error_output);
        REQUIRE(start.exit_code == 0);
        return true;
    }();
    (void)started;
    return daemon;
}

}  // namespace

TEST_CASE("vm start pushes the images to the cluster's registry by digest and verifies the cluster", "[kube]")
{
    auto& daemon = cluster_daemon();
    const auto status = daemon.pybox({"vm", "status", "--json"});
    const auto cluster = cluster_status(answer_of(status));
    INFO(json::serialize(cluster));
    CHECK(cluster.at("verified") == true);
    CHECK(status.exit_code == 0);
}

std::string mechanism(const JsonRun& run)
{
    return std::string(run.receipt.at("observed").at("termination").at("mechanism").as_string());
}

TEST_CASE("A program runs as a sealed Pod: its output, exit code and receipt, and the Pod is gone", "[kube]")
{
    auto& daemon = cluster_daemon();
    const auto run = daemon.run_json("import sys\nprint(6*7)\nprint('to stderr', file=sys.stderr)\nsys.exit(3)\n");
    INFO(run.process.output << run.process.error_output);
    const auto& receipt = run.receipt.as_object();
    CHECK(run.process.exit_code == 3);
    CHECK(receipt.at("engine").at("id") == "cluster");
    CHECK(receipt.at("capture").at("stdout") == "42\n");
    CHECK(receipt.at("capture").at("stderr") == "to stderr\n");
    CHECK(mechanism(run) == "TARGET_EXIT_OBSERVED");
    CHECK(receipt.at("observed").at("policy_verified_before_start") == true);
    CHECK(receipt.at("observed").at("effective_policy").at("mismatches").as_array().empty());
    CHECK(receipt.at("cleanup").at("removed") == true);
    const std::string container_id(receipt.at("container_id").as_string());
    const std::string run_id(receipt.at("identity").at("run_id").as_string());
    CHECK(container_id.starts_with("pybox-" + run_id + "/"));
    CHECK(pods_of_run(run_id).empty());
}

TEST_CASE("A program past its deadline is stopped on the cluster and the receipt says so", "[kube]")
{
    auto& daemon = cluster_daemon();
    const auto run = daemon.run_json("print('start', flush=True)\nwhile True: pass\n", {"--timeout", "1"});
    INFO(run.process.output << run.process.error_output);
    CHECK(run.process.exit_code == 124);
    CHECK(run.receipt.at("capture").at("stdout") == "start\n");
    CHECK(mechanism(run) == "DEADLINE_KILL");
    CHECK(run.receipt.at("observed").at("termination").at("deadline_kill_sent") == true);
    CHECK(run.receipt.at("cleanup").at("removed") == true);
}

TEST_CASE("A program over its memory is OOM-killed on the cluster, as the Pod's status says", "[kube]")
{
    auto& daemon = cluster_daemon();
    const auto run = daemon.run_json("x = bytearray(300 * 1024 * 1024)\nprint('survived')\n");
    INFO(run.process.output << run.process.error_output);
    CHECK(run.receipt.at("capture").at("stdout") == "");
    CHECK(mechanism(run) == "OUT_OF_MEMORY");
    CHECK(run.process.exit_code == 137);
}

TEST_CASE("A kubeconfig that cannot be used is a vm status problem of the cluster, and runs are refused", "[kube]")
{
    const auto broken = runtime_home().string() + "-broken.kubeconfig";
    REQUIRE(write_file_atomic(broken, "apiVersion: v1\nkind: Config\nclusters: []\n").has_value());
    auto entry = cluster_entry();
    entry["kubeconfig"] = broken;
    SideDaemon daemon("kube-broken", cluster_only(entry));
    const auto status = daemon.pybox({"vm", "status", "--json"});
    CHECK(status.exit_code == 1);
    const auto cluster = cluster_status(answer_of(status));
    INFO(json::serialize(cluster));
    CHECK(cluster.at("verified") == false);
    REQUIRE_FALSE(cluster.at("problems").as_array().empty());
    CHECK(cluster.at("problems").at(0).at("check") == "kubeconfig");
    CHECK_THAT(std::string(cluster.at("problems").at(0).at("message").as_string()), Catch::Contains(broken));
    CHECK(daemon.pybox({"exec", "-"}, "print(1)\n").exit_code != 0);
}
