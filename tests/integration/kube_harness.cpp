#include "tests/integration/kube_harness.hpp"

#include "common/process.hpp"
#include "tests/support/cluster_env.hpp"

#include <catch2/catch.hpp>

namespace pybox::test {

namespace json = boost::json;

json::object cluster_entry(const std::string& kubeconfig_key)
{
    return json::object{{"id", "cluster"},
                        {"kind", "kubernetes"},
                        {"kubeconfig", cluster_env(kubeconfig_key)},
                        {"namespace", cluster_env("K8S_NAMESPACE")},
                        {"image_registry", cluster_env("K8S_REGISTRY") + "/pybox"},
                        // The test cluster runs no scheduler, and its node (2 CPUs) admits 4 Pods of 500m.
                        {"node", cluster_env("K8S_NODE")},
                        {"max_runs", 4}};
}

json::object cluster_only(const json::object& entry)
{
    return json::object{{"engines", json::array{entry}}, {"local_engine", false}};
}

json::object cluster_status(const json::value& answer)
{
    for (const auto& engine : answer.at("engines").as_array())
        if (engine.at("id") == "cluster") return engine.as_object();
    FAIL("no engine \"cluster\" in the answer");
    return {};
}

std::string kubectl(const std::vector<std::string>& args)
{
    std::vector<std::string> command{cluster_env("K8S_KUBECTL"), "--kubeconfig", cluster_env("K8S_ADMIN_KUBECONFIG")};
    command.insert(command.end(), args.begin(), args.end());
    auto result = run_process(command);
    REQUIRE(result.has_value());
    INFO("kubectl stderr: " << result->error_output);
    REQUIRE(result->exit_code == 0);
    return result->output;
}

std::string pods_of_run(const std::string& run_id)
{
    return kubectl({"get", "pods", "-n", cluster_env("K8S_NAMESPACE"), "-l", "pybox.run=" + run_id, "-o", "name"});
}

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

std::string termination_mechanism(const JsonRun& run)
{
    return std::string(run.receipt.at("observed").at("termination").at("mechanism").as_string());
}

WatchedRun run_watched(const std::string& program, const std::vector<std::string>& extra)
{
    auto& daemon = cluster_daemon();
    const PodWatch watch;
    WatchedRun watched{daemon.run_json(program, extra), {}};
    const std::string container_id(watched.run.receipt.at("container_id").as_string());
    watched.pod_history = watch.history(container_id.substr(container_id.find('/') + 1));
    check_receipt_against_pod_history(watched.run, watched.pod_history);
    return watched;
}

}  // namespace pybox::test
