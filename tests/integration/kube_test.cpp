// The Kubernetes backend through the real client and daemon on the real test cluster
// (tests/k8s/cluster_up.sh: Kubernetes 1.20, its node's dockerd, Debian's docker-registry): a
// second pyboxd whose local engine is the suite's (it builds and pushes the images) and whose
// only engine that takes runs is the cluster, in the namespace the fixture made. Needs the
// fixtures engine and k8s (ctest's integration_kube); tagged [kube] so the suite's other runs
// leave it out.
#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/limits.hpp"
#include "common/process.hpp"
#include "tests/integration/kube_harness.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/cluster_env.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

// Seconds since the epoch of a container status's or the summary's RFC 3339 time (to the second).
std::int64_t unix_seconds(const json::value& time)
{
    const auto ns = parse_rfc3339_ns(time.as_string());
    REQUIRE(ns.has_value());
    return *ns / 1'000'000'000;
}

// observed.resources of a cluster run: the kubelet's summary of the box's node, sampled while
// the program ran; either samples (the CPU time a lower bound, never more than the program's
// lifetime allows, each sample taken within it) or UNKNOWN with the reason. Returns the status.
std::string check_kubelet_resources(const json::value& receipt)
{
    const auto& resources = receipt.at("observed").at("resources").as_object();
    INFO(json::serialize(resources));
    const std::string node = cluster_env("K8S_NODE");
    CHECK_THAT(std::string(resources.at("source").as_string()),
               Catch::StartsWith("the kubelet's summary API of the node " + node + " (GET /api/v1/nodes/" + node +
                                 "/proxy/stats/summary through the apiserver)"));
    CHECK(resources.at("node") == json::value(node));
    const auto& reads = resources.at("reads");
    // A read may fail on a loaded machine (its 5 s timeout); the receipt then says how many did.
    CHECK(resources.at("errors").as_array().empty() == (reads.at("failed") == 0));
    const auto& unknown = receipt.at("unknown");
    const auto& reasons = receipt.at("unknown_reasons");
    CHECK(unknown.at("final_resource_counters") == true);
    const std::string status(resources.at("status").as_string());
    if (status == "UNKNOWN") {
        CHECK(reads.at("with_entry") == 0);
        CHECK(unknown.at("resources") == true);
        CHECK(reasons.at("resources") == resources.at("reason"));
        CHECK_THAT(std::string(resources.at("reason").as_string()),
                   Catch::Contains("the kubelet's summary of the node " + node));
        return status;
    }
    REQUIRE(status == "COLLECTED");
    CHECK_FALSE(unknown.as_object().contains("resources"));
    CHECK(reads.at("with_entry").to_number<int>() >= 1);
    CHECK(resources.at("final_counters_complete") == false);
    CHECK_THAT(std::string(reasons.at("final_resource_counters").as_string()),
               Catch::Contains("keeps no entry for a container once it ended") && Catch::Contains("lower bound"));
    const auto& terminated = receipt.at("observed").at("engine_state").at("state").at("terminated");
    const auto started = unix_seconds(terminated.at("startedAt"));
    const auto finished = unix_seconds(terminated.at("finishedAt"));
    const auto& cpu = resources.at("metrics").at("cpu.stat.usage_usec");
    CHECK(cpu.at("final").is_null());
    const auto usec = cpu.at("max").to_number<std::int64_t>();
    CHECK(usec > 0);
    // Both times are to the second: the lifetime is at most one second longer than they say.
    CHECK(usec <= (finished - started + 1) * 1'000'000);
    for (const char* key : {"first_time", "last_time"}) {
        const auto at = unix_seconds(cpu.at(key));
        CHECK(at >= started);
        CHECK(at <= finished);
    }
    CHECK(resources.at("metrics").at("memory.working_set").at("max").to_number<std::int64_t>() > 0);
    return status;
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


TEST_CASE("A program runs as a sealed Pod: its output, exit code and receipt, and the Pod is gone", "[kube]")
{
    const auto run = run_watched("import sys\nprint(6*7)\nprint('to stderr', file=sys.stderr)\nsys.exit(3)\n").run;
    INFO(run.process.output << run.process.error_output);
    const auto& receipt = run.receipt.as_object();
    CHECK(run.process.exit_code == 3);
    CHECK(receipt.at("engine").at("id") == "cluster");
    CHECK(receipt.at("capture").at("stdout") == "42\n");
    CHECK(receipt.at("capture").at("stderr") == "to stderr\n");
    CHECK(termination_mechanism(run) == "TARGET_EXIT_OBSERVED");
    CHECK(receipt.at("observed").at("policy_verified_before_start") == true);
    const auto& effective = receipt.at("observed").at("effective_policy");
    CHECK(effective.at("mismatches").as_array().empty());
    // The image the node ran, as the kubelet reported it once the box ended: the pushed digest
    // the Pod named.
    const std::string image(effective.at("spec").at("containers").at(0).at("image").as_string());
    const std::string ran(effective.at("image_id").as_string());
    CHECK(ran.ends_with(image.substr(image.find('@'))));
    CHECK(receipt.at("cleanup").at("removed") == true);
    // What a cluster cannot show is named for what it is, never as a Docker engine's gap.
    CHECK_THAT(std::string(receipt.at("unknown_reasons").at("program_end").as_string()),
               Catch::Contains("where no PyBox agent reads"));
    // A program this short ends before the kubelet's second sample of it, often before its first.
    check_kubelet_resources(run.receipt);
    // The bytes came through the apiserver's attach websocket, and the receipt says so.
    const std::string provenance(receipt.at("capture").at("provenance").as_string());
    CHECK_THAT(provenance, Catch::Contains("attach websocket") && !Catch::Contains("Docker"));
    CHECK(effective.at("node_pids_limit").at("node").as_string() == cluster_env("K8S_NODE"));
    CHECK(effective.at("node_pids_limit").at("read") == true);
    CHECK(effective.at("node_pids_limit").at("pod_pids_limit") == 32);
    const std::string container_id(receipt.at("container_id").as_string());
    const std::string run_id(receipt.at("identity").at("run_id").as_string());
    CHECK(container_id.starts_with("pybox-" + run_id + "/"));
    CHECK(pods_of_run(run_id).empty());
}

TEST_CASE("A cluster's receipt lists what the kubelet added to the program's environment; a forged report is the "
          "program's output, kept exactly",
          "[kube]")
{
    auto& daemon = cluster_daemon();
    // The program's first output is a report of its own, naming A=B; then the names of its
    // environment that PyBox did not set.
    const std::string forged = "pybox-environment 41=42\n";
    const auto run = daemon.run_json("import os, sys\nsys.stdout.write('pybox-environment 41=42\\n')\n"
                                     "print(' '.join(sorted(k for k in os.environ if k not in ('PATH', 'LANG', 'HOME'))))\n");
    INFO(run.process.output << run.process.error_output);
    CHECK(run.process.exit_code == 0);
    const auto& capture = run.receipt.at("capture");
    const std::string stdout_text(capture.at("stdout").as_string());
    REQUIRE(stdout_text.starts_with(forged));
    CHECK(capture.at("stdout_bytes") == stdout_text.size());
    CHECK_FALSE(run.receipt.at("unknown").as_object().contains("environment"));
    const auto& environment = run.receipt.at("observed").at("environment");
    CHECK_THAT(std::string(environment.at("source").as_string()), Catch::Contains("first process"));
    std::set<std::string> listed, names;
    for (const auto& variable : environment.at("beyond_spec").as_array()) {
        const std::string text(variable.as_string());
        listed.insert(text);
        names.insert(text.substr(0, text.find('=')));
    }
    // Exactly the names the program saw beyond PyBox's, and the cluster's API service among
    // them, by its address; the forged A=B is not.
    std::set<std::string> seen;
    std::istringstream words(stdout_text.substr(forged.size()));
    for (std::string word; words >> word;) seen.insert(word);
    CHECK(names == seen);
    const auto service_ip = kubectl({"get", "service", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.clusterIP}"});
    REQUIRE_FALSE(service_ip.empty());
    CHECK(listed.contains("KUBERNETES_SERVICE_HOST=" + service_ip));
    CHECK_FALSE(listed.contains("A=B"));
    CHECK_FALSE(names.contains("PWD"));
}

TEST_CASE("A busy program's CPU time on the cluster is a lower bound from the kubelet's samples taken while it ran",
          "[kube]")
{
    // About 15 s of a busy loop, then 32 MiB: the samples read while it runs. The kubelet refreshes
    // a container's figures every 10-15 s or more (docs/kubernetes.md), so whether a sample after
    // the start's falls inside the run is the kubelet's business: when one does, it shows the busy
    // loop's CPU time.
    const auto run = run_watched("import time\nt = time.time()\nwhile time.time() - t < 15: pass\n"
                                 "x = bytearray(32 * 1024 * 1024)\ntime.sleep(2)\nprint('done')\n",
                                 {"--timeout", "30"})
                         .run;
    INFO(run.process.output << run.process.error_output);
    CHECK(run.process.exit_code == 0);
    CHECK(run.receipt.at("capture").at("stdout") == "done\n");
    CHECK(check_kubelet_resources(run.receipt) == "COLLECTED");
    const auto& resources = run.receipt.at("observed").at("resources");
    const auto samples = resources.at("sample_count").to_number<int>();
    const auto cpu_usec = resources.at("metrics").at("cpu.stat.usage_usec").at("max").to_number<std::int64_t>();
    CHECK(samples >= 1);
    CHECK(cpu_usec > 0);
    if (samples >= 2) CHECK(cpu_usec > 1'000'000);  // more than the interpreter's start
    WARN("a 17 s busy run on the cluster: " << samples << " distinct summary samples, CPU >= " << cpu_usec << " us");
}

TEST_CASE("A program past its deadline is stopped on the cluster, on the evidence of the feeder's record of the kill",
          "[kube]")
{
    const auto run = run_watched("print('start', flush=True)\nwhile True: pass\n", {"--timeout", "1"}).run;
    INFO(run.process.output << run.process.error_output);
    CHECK(run.receipt.at("capture").at("stdout") == "start\n");
    const auto& termination = run.receipt.at("observed").at("termination");
    CHECK(termination.at("deadline_kill_sent") == true);
    // The container status says 137 to the second, with no kernel record and no sub-second
    // clock; what settles it is the termination message: the kill's nonce, which only the
    // box's feeder received, written before it killed.
    CHECK(termination_mechanism(run) == "DEADLINE_KILL");
    CHECK(run.process.exit_code == 124);
    CHECK(termination.at("exit_code") == 137);
    CHECK(termination.at("signal") == 9);
    CHECK(termination.at("signal_source") == "pybox_kill");
    CHECK(run.receipt.at("unknown").at("exact_termination_cause") == false);
    const json::object* deadline_kill = nullptr;
    for (const auto& explanation : run.receipt.at("explanations").as_array())
        if (explanation.at("code") == "DEADLINE_KILL") deadline_kill = &explanation.as_object();
    REQUIRE(deadline_kill != nullptr);
    const auto& acknowledgement = deadline_kill->at("evidence").at("kill_acknowledgement");
    const std::string nonce(acknowledgement.at("kill_nonce").as_string());
    CHECK(nonce.size() == 32);
    const json::value record = json::value("pybox-kill " + nonce + "\n");
    CHECK(acknowledgement.at("terminationMessage") == record);
    CHECK(run.receipt.at("observed").at("engine_state").at("state").at("terminated").at("message") == record);
    CHECK(run.receipt.at("lifecycle").at("timing").at("total_s").to_number<double>() < 10.0);
    CHECK(run.receipt.at("cleanup").at("removed") == true);
}

TEST_CASE("A program of the largest size a request takes reaches its Pod whole, in several stdin messages", "[kube]")
{
    // A literal of 10 * copies bytes; the source just under the request's limit, so it is sent
    // as more than one stdin message, each of more than one Beast write buffer.
    const std::size_t copies = (limits::k_max_source_bytes - 64) / 10;
    std::string literal;
    for (std::size_t i = 0; i < copies; ++i) literal += "0123456789";
    const std::string program = "x = '" + literal + "'\nprint(len(x), x == '0123456789' * " + std::to_string(copies) + ")\n";
    REQUIRE(program.size() <= limits::k_max_source_bytes);
    const auto run = run_watched(program).run;
    INFO(captured(run.receipt, "stderr"));
    CHECK(run.process.exit_code == 0);
    CHECK(captured(run.receipt, "stdout") == std::to_string(literal.size()) + " True\n");
    CHECK(run.receipt.at("submission").at("source_bytes") == program.size());
}

TEST_CASE("A fork bomb on the cluster meets the node's pids limit", "[kube]")
{
    const auto run = run_watched(fork_bomb_program(64), {"--timeout", "5"}).run;
    INFO(run.process.output << run.process.error_output);
    REQUIRE(run.process.exit_code == 0);
    // The node's podPidsLimit counts every process of the Pod (its first process, the feeder,
    // the interpreter): fewer than the limit are left for the forks.
    CHECK(std::stoi(std::string(run.receipt.at("capture").at("stdout").as_string())) <
          std::stoi(cluster_env("K8S_POD_PIDS_LIMIT")));
}

TEST_CASE("An output flood on the cluster is kept up to the limit and counted exactly", "[kube]")
{
    const auto run = run_watched("import sys\nsys.stdout.write('x' * 3000000)\nsys.stderr.write('e' * 100)\n",
                                 {"--output-limit", "1000"})
                         .run;
    INFO(run.process.error_output);
    CHECK(run.process.exit_code == 0);
    const auto& capture = run.receipt.at("capture");
    CHECK(capture.at("stdout").as_string() == std::string(1000, 'x'));
    CHECK(capture.at("stdout_bytes") == 3000000);
    CHECK(capture.at("stderr_bytes") == 100);
}

TEST_CASE("Files go in and come back from a Pod", "[kube]")
{
    const auto root = std::filesystem::path(runtime_home().string() + "-kube-files");
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "out");
    REQUIRE(write_file_atomic(root / "data.csv", "a,b\n1,2\n").has_value());
    const auto run = run_watched("print(open('data.csv').read().split()[1])\nopen('out/result.txt', 'w').write('3\\n')\n",
                                 {"--in", (root / "data.csv").string(), "--out", (root / "out").string()})
                         .run;
    INFO(run.process.output << run.process.error_output);
    CHECK(run.process.exit_code == 0);
    CHECK(run.receipt.at("capture").at("stdout") == "1,2\n");
    const auto result = read_file_capped(root / "out" / "result.txt", 1024);
    REQUIRE(result.has_value());
    CHECK(*result == "3\n");
    std::filesystem::remove_all(root);
}

TEST_CASE("Eight programs at once on the cluster all run, as many at once as the entry's max_runs", "[kube]")
{
    auto& daemon = cluster_daemon();
    const PodWatch watch;
    // try_pybox asserts nothing, so the clients run on threads of their own; the checks follow.
    std::vector<std::future<Expected<ProcessResult>>> runs;
    for (int i = 0; i < 8; ++i)
        runs.push_back(std::async(std::launch::async, [&daemon, i] {
            return daemon.try_pybox({"exec", "-", "--json", "--timeout", "10"},
                                    "import time\ntime.sleep(1)\nprint(" + std::to_string(i) + ")\n");
        }));
    std::set<std::string> uids;
    for (int i = 0; i < 8; ++i) {
        const auto run = runs[static_cast<std::size_t>(i)].get();
        REQUIRE(run.has_value());
        INFO(run->output << run->error_output);
        CHECK(run->exit_code == 0);
        const JsonRun watched{*run, answer_of(*run)};
        CHECK(watched.receipt.at("capture").at("stdout").as_string() == std::to_string(i) + "\n");
        const std::string container_id(watched.receipt.at("container_id").as_string());
        const auto uid = container_id.substr(container_id.find('/') + 1);
        uids.insert(uid);
        check_receipt_against_pod_history(watched, watch.history(uid));
    }
    REQUIRE(uids.size() == 8);
    // The Pods the apiserver held at once, by the watch: the entry's max_runs, never more.
    int held = 0;
    int most = 0;
    for (const auto& event : watch.events()) {
        if (!uids.contains(std::string(event.pod.at("metadata").at("uid").as_string()))) continue;
        if (event.type == "ADDED") most = std::max(most, ++held);
        if (event.type == "DELETED") --held;
    }
    CHECK(most == cluster_entry().at("max_runs").as_int64());
}

TEST_CASE("A program over its memory is OOM-killed on the cluster, as the Pod's status says", "[kube]")
{
    const auto run = run_watched("x = bytearray(300 * 1024 * 1024)\nprint('survived')\n").run;
    INFO(run.process.output << run.process.error_output);
    CHECK(run.receipt.at("capture").at("stdout") == "");
    CHECK(termination_mechanism(run) == "OUT_OF_MEMORY");
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

TEST_CASE("A user without the permissions PyBox needs makes the cluster unverified, naming them", "[kube]")
{
    SideDaemon daemon("kube-nobody", cluster_only(cluster_entry("K8S_NOBODY_KUBECONFIG")));
    const auto status = daemon.pybox({"vm", "status", "--json"});
    CHECK(status.exit_code == 1);
    const auto cluster = cluster_status(answer_of(status));
    INFO(json::serialize(cluster));
    CHECK(cluster.at("verified") == false);
    bool names_pods = false;
    for (const auto& problem : cluster.at("problems").as_array())
        if (problem.at("check") == "access" && problem.at("message").as_string().find("create pods") != std::string::npos)
            names_pods = true;
    CHECK(names_pods);
}

TEST_CASE("A pushed image whose recorded digest was tampered with is never run", "[kube]")
{
    auto& daemon = cluster_daemon();
    const auto record_file = daemon.home() / "pushed-images" / "cluster.json";
    const auto original = read_file_capped(record_file, 1 << 20);
    REQUIRE(original.has_value());
    // Another digest, the same in the reference and the record, as a consistent forgery would be.
    const auto at = original->find("@sha256:");
    REQUIRE(at != std::string::npos);
    const std::string digest = original->substr(at + 1, 71);
    const std::string forged = "sha256:" + std::string(64, 'a');
    std::string tampered = *original;
    for (auto found = tampered.find(digest); found != std::string::npos; found = tampered.find(digest))
        tampered.replace(found, digest.size(), forged);
    // The daemon reads the record once and keeps it: a restart (and `vm status`, which checks
    // the cluster again, as a restarted daemon needs before it sends runs there) takes the forgery.
    const auto restart_with = [&](const std::string& record) {
        REQUIRE(write_file_atomic(record_file, record).has_value());
        daemon.kill_hard();
        daemon.restart();
        CHECK(cluster_status(answer_of(daemon.pybox({"vm", "status", "--json"}))).at("verified") == true);
    };
    restart_with(tampered);
    std::optional<PodWatch> watch(std::in_place);
    const auto run = daemon.run_json("print('must not run')\n");
    INFO(run.process.output << run.process.error_output);
    const std::string run_id(run.receipt.at("identity").at("run_id").as_string());
    // The Pod the run made, as the apiserver recorded it: it never ran the program, and it is
    // the receipt's, deleted.
    const auto pods = watch->run_histories(run_id, 1);
    watch.reset();
    restart_with(*original);
    CHECK(pods.size() == 1);
    for (const auto& history : pods) check_unstarted_pod(run, history);
    CHECK(run.process.exit_code != 0);
    CHECK(run.receipt.at("capture").at("stdout") == "");
    CHECK(termination_mechanism(run) == "NOT_STARTED");
    CHECK(run.receipt.at("cleanup").at("removed") == true);
    CHECK(pods_of_run(run_id).empty());
    CHECK(daemon.run_json("print(6*7)\n").receipt.at("capture").at("stdout") == "42\n");
}

TEST_CASE("A run whose apiserver stops mid-run says so, and its Pod is removed once the apiserver is back", "[kube]")
{
    auto& daemon = cluster_daemon();
    const auto apiserver = (source_dir() / "tests" / "k8s" / "apiserver.sh").string();
    std::optional<PodWatch> watch(std::in_place);
    auto pending = std::async(std::launch::async, [&daemon] {
        return daemon.try_pybox({"exec", "-", "--json", "--timeout", "10"},
                                "import time\nprint('begun', flush=True)\ntime.sleep(8)\nprint('done')\n");
    });
    // The run's container runs, as the kubelet reported it (the program is delivered as soon as
    // the runtime runs it, about when the kubelet reports it): then the apiserver goes away
    // under it, 2 s later. A Pod merely made may still be starting for seconds on a loaded node.
    const auto container_runs = [&] {
        for (const auto& event : watch->events()) {
            const auto* statuses = event.pod.at("status").as_object().if_contains("containerStatuses");
            if (statuses != nullptr && statuses->is_array() && !statuses->as_array().empty() &&
                statuses->as_array().at(0).at("state").as_object().contains("running"))
                return true;
        }
        return false;
    };
    REQUIRE(within(std::chrono::seconds(60), container_runs));
    // The observer's record up to the stop: its open watch would hold up the apiserver's
    // graceful stop, and nothing can be watched while the apiserver is away.
    const auto until_stop = watch->events();
    watch.reset();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const auto stopped = run_process({apiserver, "stop"});
    const auto run = pending.get();
    const auto started = run_process({apiserver, "start"});
    REQUIRE(stopped.has_value());
    CHECK(stopped->exit_code == 0);
    REQUIRE(started.has_value());
    REQUIRE(started->exit_code == 0);
    // A record from the apiserver's return on, before the daemon looks at the cluster again.
    watch.emplace();
    REQUIRE(run.has_value());
    INFO(run->output << run->error_output);
    CHECK(run->exit_code == 125);
    const auto receipt = answer_of(*run);
    const std::string run_id(receipt.at("identity").at("run_id").as_string());
    CHECK(receipt.at("capture").at("stdout") == "begun\n");
    std::set<std::string> codes;
    for (const auto& explanation : receipt.at("explanations").as_array())
        codes.insert(std::string(explanation.at("code").as_string()));
    CHECK(codes.contains("ENGINE_GONE"));
    CHECK(codes.contains("REMOVAL_UNCONFIRMED"));
    CHECK(receipt.at("cleanup").at("removed") == false);
    CHECK(receipt.at("observed").at("termination").at("mechanism") == "ENGINE_LOST");

    // The cluster is checked again, and the next run removes the Pod the lost run left.
    const auto status = daemon.pybox({"vm", "status", "--json"});
    CHECK(cluster_status(answer_of(status)).at("verified") == true);
    CHECK(daemon.run_json("print(6*7)\n").receipt.at("capture").at("stdout") == "42\n");
    CHECK(pods_of_run(run_id).empty());
    // The observer: up to the stop the Pod ran and neither ended nor went; after the return it
    // was deleted, with grace 0.
    const std::string container_id(receipt.at("container_id").as_string());
    const auto uid = container_id.substr(container_id.find('/') + 1);
    std::vector<PodEvent> until_lost;
    for (const auto& event : until_stop)
        if (event.pod.at("metadata").at("uid") == json::value(uid)) until_lost.push_back(event);
    const auto after_return = watch->history(uid);
    INFO("the receipt: " << json::serialize(receipt));
    for (const auto& contradiction : lost_pod_contradictions(receipt, until_lost, after_return))
        FAIL_CHECK(contradiction);
}

TEST_CASE("A program cannot fill its node's disk through the kubelet's termination log", "[kube]")
{
    // The one file a Pod's container may write outside its memory-backed /tmp: every uid may
    // write it, and it lies on the node's disk. The first process's file size limit (the tmpfs's
    // 16 MiB) stops the write; Python ignores SIGXFSZ, so it sees EFBIG (27).
    const auto run = run_watched("try:\n"
                                     "    with open('/dev/termination-log', 'wb') as log:\n"
                                     "        for _ in range(64):\n"
                                     "            log.write(b'x' * (1 << 19))\n"
                                     "    print('wrote 32 MiB')\n"
                                     "except OSError as error:\n"
                                     "    print('stopped', error.errno)\n",
                                 {"--timeout", "10"})
                         .run;
    INFO(run.process.output << run.process.error_output);
    CHECK(run.receipt.at("capture").at("stdout") == "stopped 27\n");
    CHECK(run.process.exit_code == 0);
}

namespace {

// Moves PyBox's seccomp profile out of the node's kubelet's seccomp root, and puts it back at
// the end of its scope (also when the case fails).
class ProfileMovedAway {
public:
    ProfileMovedAway()
        : m_profile(std::filesystem::path(cluster_env("K8S_SECCOMP_ROOT")) / cluster_env("K8S_SECCOMP_PROFILE")),
          m_aside(m_profile.string() + ".moved-away")
    {
        std::filesystem::rename(m_profile, m_aside);
    }
    ~ProfileMovedAway() { put_back(); }
    ProfileMovedAway(const ProfileMovedAway&) = delete;
    ProfileMovedAway& operator=(const ProfileMovedAway&) = delete;

    void put_back()
    {
        std::error_code ignored;
        if (std::filesystem::exists(m_aside)) std::filesystem::rename(m_aside, m_profile, ignored);
    }

private:
    std::filesystem::path m_profile;
    std::filesystem::path m_aside;
};

std::set<std::string> codes_of(const json::value& receipt)
{
    std::set<std::string> codes;
    for (const auto& explanation : receipt.at("explanations").as_array())
        codes.insert(std::string(explanation.at("code").as_string()));
    return codes;
}

// The seccomp profile type of the box container as the apiserver held it.
std::string seccomp_type(const json::value& receipt)
{
    const auto& container = receipt.at("observed").at("effective_policy").at("spec").at("containers").at(0);
    return std::string(container.at("securityContext").at("seccompProfile").at("type").as_string());
}

}  // namespace

TEST_CASE("On a node without PyBox's seccomp profile the run goes on under the runtime's default, and says so",
          "[kube]")
{
    auto& daemon = cluster_daemon();
    ProfileMovedAway moved;

    // The first run meets the node without the profile: its Pod is deleted, and a Pod asking for
    // RuntimeDefault runs the program. The apiserver's record of both is held against the
    // receipt: the first never ran, the second is the receipt's.
    std::optional<PodWatch> watch(std::in_place);
    const auto first = daemon.run_json("print(6*7)\n");
    INFO(first.process.output << first.process.error_output);
    const auto pods = watch->run_histories(std::string(first.receipt.at("identity").at("run_id").as_string()), 2);
    watch.reset();
    REQUIRE(pods.size() == 2);
    check_unstarted_pod(first, pods.front());
    CHECK(pods.front().front().pod.at("spec").at("containers").at(0).at("securityContext").at("seccompProfile").at(
              "type") == "Localhost");
    check_receipt_against_pod_history(first, pods.back());
    CHECK(first.process.exit_code == 0);
    CHECK(first.receipt.at("capture").at("stdout") == "42\n");
    CHECK(seccomp_type(first.receipt) == "RuntimeDefault");
    CHECK(first.receipt.at("observed").at("effective_policy").at("mismatches").as_array().empty());
    CHECK(first.receipt.at("unknown").at("seccomp_profile") == true);
    CHECK_THAT(std::string(first.receipt.at("unknown_reasons").at("seccomp_profile").as_string()),
               Catch::Contains("allows system calls PyBox's profile denies"));
    const auto& fallback = first.receipt.at("observed").at("effective_policy").at("seccomp_fallback");
    CHECK(fallback.at("node").as_string() == cluster_env("K8S_NODE"));
    CHECK_THAT(std::string(fallback.at("kubelet").as_string()),
               Catch::StartsWith("CreateContainerError: ") && Catch::EndsWith("no such file or directory"));
    CHECK(codes_of(first.receipt).contains("BOX_REMADE"));
    CHECK(first.receipt.at("cleanup").at("removed") == true);
    CHECK(pods_of_run(std::string(first.receipt.at("identity").at("run_id").as_string())).empty());

    // The node is remembered: the next run asks for RuntimeDefault at once.
    const auto second = run_watched("print(6*7)\n").run;
    CHECK(second.receipt.at("capture").at("stdout") == "42\n");
    CHECK(seccomp_type(second.receipt) == "RuntimeDefault");
    CHECK(second.receipt.at("unknown").at("seccomp_profile") == true);
    CHECK_FALSE(codes_of(second.receipt).contains("BOX_REMADE"));

    // With the profile back, `vm status` makes the daemon look again: Localhost.
    moved.put_back();
    CHECK(cluster_status(answer_of(daemon.pybox({"vm", "status", "--json"}))).at("verified") == true);
    const auto third = run_watched("print(6*7)\n").run;
    CHECK(third.receipt.at("capture").at("stdout") == "42\n");
    CHECK(seccomp_type(third.receipt) == "Localhost");
    CHECK_FALSE(third.receipt.at("unknown").as_object().contains("seccomp_profile"));
    CHECK(third.receipt.at("observed").at("effective_policy").at("seccomp_fallback").is_null());
    CHECK_FALSE(codes_of(third.receipt).contains("BOX_REMADE"));
}

// The observer itself: receipts changed in what they conclude are contradicted by the record of
// the Pod they came from.
TEST_CASE("The independent observer contradicts a receipt whose exit code, end or deletion is not the Pod's", "[kube]")
{
    const auto watched = run_watched("import sys\nsys.exit(3)\n");
    REQUIRE(pod_history_contradictions(watched.run.receipt, watched.pod_history).empty());
    const auto changed = [&](const std::function<void(json::object&)>& change) {
        auto receipt = watched.run.receipt;
        change(receipt.as_object());
        return pod_history_contradictions(receipt, watched.pod_history);
    };
    // Exactly one contradiction, in these words.
    const auto check_finds = [](const std::vector<std::string>& found, const std::string& words) {
        INFO("contradictions: " << json::serialize(json::value_from(found)));
        CHECK(found.size() == 1);
        if (!found.empty()) CHECK_THAT(found.front(), Catch::Contains(words));
    };
    check_finds(changed([](json::object& r) { r["observed"].as_object()["termination"].as_object()["exit_code"] = 0; }),
                "exit code is not the Pod's");
    check_finds(changed([](json::object& r) {
                    r["observed"].as_object()["termination"].as_object()["mechanism"] = "OUT_OF_MEMORY";
                }),
                "OUT_OF_MEMORY without OOMKilled");
    check_finds(changed([](json::object& r) {
                    auto& state = r["observed"].as_object()["engine_state"].as_object()["state"].as_object();
                    state["terminated"].as_object()["finishedAt"] = "2000-01-01T00:00:00Z";
                }),
                "engine_state.state.terminated is not the Pod's");
    check_finds(changed([](json::object& r) { r["cleanup"].as_object()["removed"] = false; }), "cleanup.removed false");
    const auto elsewhere = changed([](json::object& r) {
        r["observed"].as_object()["effective_policy"].as_object()["spec"].as_object()["nodeName"] = "elsewhere";
    });
    CHECK(elsewhere.size() == watched.pod_history.size());
    for (const auto& finding : elsewhere) CHECK_THAT(finding, Catch::Contains("the spec is not effective_policy.spec"));
}
