#include "daemon/kube/pod_spec.hpp"
#include "daemon/run/box_spec.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace pybox;
namespace json = boost::json;

namespace {

constexpr const char* k_image =
    "127.0.0.1:5000/pybox/stdlib@sha256:231942a3c0b8e4f0d2f1a9e6c7b5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7";

engine::BoxSpec stdlib_spec()
{
    const daemon::BoxIdentity identity{"0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210",
                                       1900000000, "", 1001};
    return daemon::make_box_spec(*proto::policy_for_image("stdlib"), "sha256:unused",
                                 proto::box_command(2.0), identity);
}

kube::PodSettings settings(std::string seccomp = "pybox-seccomp-v2.json")
{
    return {k_image, std::move(seccomp), 3, "k8s-node"};
}

json::object stdlib_pod() { return kube::make_pod(stdlib_spec(), settings()); }

// What Kubernetes 1.20 answers for that Pod: its defaulting and admission plugins
// (ServiceAccount, Priority, DefaultTolerationSeconds), the seccomp annotation of the version
// skew, the bookkeeping, the booleans it leaves out when false, and the first status.
json::value admitted(const json::object& asked)
{
    json::object pod = asked;
    auto& metadata = pod["metadata"].as_object();
    metadata["namespace"] = "pybox";
    metadata["uid"] = "6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f";
    metadata["resourceVersion"] = "4711";
    metadata["creationTimestamp"] = "2026-12-04T10:00:00Z";
    metadata["managedFields"] = json::parse(R"([{"manager":"pybox","operation":"Update","apiVersion":"v1"}])");
    metadata["annotations"] = json::object{{"container.seccomp.security.alpha.kubernetes.io/box",
                                            "localhost/pybox-seccomp-v2.json"}};
    auto& spec = pod["spec"].as_object();
    for (auto key : {"hostNetwork", "hostPID", "hostIPC"}) spec.erase(key);
    auto& container = spec["containers"].as_array()[0].as_object();
    container.erase("stdinOnce");
    container.erase("tty");
    container["terminationMessagePath"] = "/dev/termination-log";
    container["terminationMessagePolicy"] = "File";
    spec["dnsPolicy"] = "ClusterFirst";
    spec["schedulerName"] = "default-scheduler";
    spec["serviceAccountName"] = "default";
    spec["serviceAccount"] = "default";
    spec["securityContext"] = json::object{};
    spec["priority"] = 0;
    spec["preemptionPolicy"] = "PreemptLowerPriority";
    spec["tolerations"] = json::parse(
        R"([{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
            {"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}])");
    pod["status"] = json::object{{"phase", "Pending"}, {"qosClass", "Guaranteed"}};
    return pod;
}

json::object& box_of(json::value& pod) { return pod.at("spec").at("containers").as_array()[0].as_object(); }

std::vector<std::string> fields(const engine::SettingsCheck& check)
{
    std::vector<std::string> names;
    for (const auto& m : check.mismatches) names.push_back(m.field);
    return names;
}

// The one mismatch of `read_back`, by field.
std::string only_mismatch(const json::value& read_back)
{
    const auto check = kube::check_pod(stdlib_pod(), read_back);
    REQUIRE(check.mismatches.size() == 1);
    return check.mismatches[0].field;
}

}  // namespace

TEST_CASE("The Pod for the stdlib policy has every field of the sealed Pod", "[pod_spec]")
{
    const json::object pod = stdlib_pod();
    CHECK(pod.at("metadata").at("name") == "pybox-fedcba9876543210fedcba9876543210");
    const auto& labels = pod.at("metadata").at("labels").as_object();
    CHECK(labels.at("pybox.owner") == "0123456789abcdef0123456789abcdef");
    CHECK(labels.at("pybox.run") == "fedcba9876543210fedcba9876543210");
    CHECK(labels.at("pybox.expires") == "1900000000");
    CHECK(labels.at("pybox.user") == "1001");

    const auto& spec = pod.at("spec").as_object();
    CHECK(spec.at("restartPolicy") == "Never");
    CHECK(spec.at("terminationGracePeriodSeconds") == 0);
    CHECK(spec.at("activeDeadlineSeconds") == 3);
    CHECK(spec.at("automountServiceAccountToken") == false);
    CHECK(spec.at("enableServiceLinks") == false);
    for (auto key : {"hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace"}) CHECK(spec.at(key) == false);
    CHECK(spec.at("hostname") == "pybox");
    CHECK(spec.at("nodeName") == "k8s-node");
    CHECK(!spec.contains("dnsPolicy"));
    CHECK(spec.at("volumes") == json::parse(R"([{"name":"tmp","emptyDir":{"medium":"Memory","sizeLimit":"16Mi"}}])"));

    REQUIRE(spec.at("containers").as_array().size() == 1);
    const auto& box = spec.at("containers").as_array()[0].as_object();
    CHECK(box.at("name") == "box");
    CHECK(box.at("image") == k_image);
    CHECK(box.at("imagePullPolicy") == "IfNotPresent");
    CHECK(box.at("command").as_array().size() == proto::box_command(2.0).size());
    CHECK(!box.contains("args"));
    CHECK(box.at("env") ==
          json::parse(R"([{"name":"PATH","value":"/usr/local/bin:/usr/bin:/bin"},{"name":"LANG","value":"C.UTF-8"},
                          {"name":"HOME","value":"/tmp"}])"));
    CHECK(box.at("stdin") == true);
    CHECK(box.at("stdinOnce") == false);
    CHECK(box.at("tty") == false);
    CHECK(box.at("workingDir") == "/tmp");
    CHECK(box.at("resources") ==
          json::parse(R"({"requests":{"memory":"128Mi","cpu":"500m"},"limits":{"memory":"128Mi","cpu":"500m"}})"));
    CHECK(box.at("securityContext") == json::parse(R"({"runAsUser":10000,"runAsGroup":10000,"runAsNonRoot":true,
        "readOnlyRootFilesystem":true,"allowPrivilegeEscalation":false,"privileged":false,
        "capabilities":{"drop":["ALL"]},"seccompProfile":{"type":"Localhost","localhostProfile":"pybox-seccomp-v2.json"}})"));
    CHECK(box.at("volumeMounts") == json::parse(R"([{"name":"tmp","mountPath":"/tmp"}])"));
    CHECK(box.at("terminationMessagePath") == "/dev/termination-log");
    CHECK(box.at("terminationMessagePolicy") == "File");
}

TEST_CASE("Every '$' of the command and the environment is doubled, so the kubelet's expansion gives it back", "[pod_spec]")
{
    auto spec = stdlib_spec();
    spec.command = {"perl", "-e", "exit 1 if $$ != 1; print \"$(HOME)\""};
    spec.environment = {"PS1=$ ", "PLAIN=x"};
    const auto pod = kube::make_pod(spec, settings());
    const auto& box = pod.at("spec").at("containers").at(0);
    CHECK(box.at("command") == json::array{"perl", "-e", "exit 1 if $$$$ != 1; print \"$$(HOME)\""});
    CHECK(box.at("env").at(0).at("value") == "$$ ");
    CHECK(box.at("env").at(1).at("value") == "x");
    CHECK(kube::check_pod(pod, json::value(pod)).mismatches.empty());
}

TEST_CASE("Without a Localhost profile the Pod asks for the runtime's default seccomp profile", "[pod_spec]")
{
    const json::object pod = kube::make_pod(stdlib_spec(), settings(""));
    CHECK(pod.at("spec").at("containers").at(0).at("securityContext").at("seccompProfile") ==
          json::parse(R"({"type":"RuntimeDefault"})"));
}

TEST_CASE("A Pod under PyBox's Localhost profile leaves nothing of its seccomp profile unknown", "[pod_spec]")
{
    const json::object asked = stdlib_pod();
    CHECK(kube::check_pod(asked, admitted(asked)).unknown.empty());
}

TEST_CASE("A Pod under the runtime's default seccomp profile passes as asked, and which calls it allows is unknown",
          "[pod_spec]")
{
    const json::object asked = kube::make_pod(stdlib_spec(), settings(""));
    json::value read_back = admitted(asked);
    read_back.at("metadata").at("annotations").as_object()["container.seccomp.security.alpha.kubernetes.io/box"] =
        "runtime/default";
    const auto check = kube::check_pod(asked, read_back);
    CHECK(fields(check).empty());
    REQUIRE(check.unknown.size() == 1);
    CHECK(check.unknown[0].first == "seccomp_profile");
    CHECK_THAT(check.unknown[0].second, Catch::Contains("RuntimeDefault") && Catch::Contains("allows system calls"));
}

TEST_CASE("Quantities are written in Kubernetes' canonical notation and compared by value", "[pod_spec]")
{
    CHECK(kube::memory_quantity(128 * 1024 * 1024) == "128Mi");
    CHECK(kube::memory_quantity(1000) == "1000");
    CHECK(kube::memory_quantity(3 * 1024) == "3Ki");
    CHECK(kube::cpu_quantity(500) == "500m");
    CHECK(kube::cpu_quantity(2000) == "2");
    CHECK(kube::cpu_quantity(1) == "1m");
    CHECK(kube::quantity_millis("128Mi") == kube::quantity_millis("134217728"));
    CHECK(kube::quantity_millis("0.5") == 500);
    CHECK(kube::quantity_millis("500m") == 500);
    CHECK(kube::quantity_millis("1.5Gi") == std::int64_t{1536} * 1024 * 1024 * 1000);
    CHECK(!kube::quantity_millis(""));
    CHECK(!kube::quantity_millis("1e3"));
    CHECK(!kube::quantity_millis("-1"));
    CHECK(!kube::quantity_millis("1.0001"));
    CHECK(!kube::quantity_millis("0.5m"));
    CHECK(!kube::quantity_millis("999999999999999Ti"));
}

TEST_CASE("The asked Pod with the apiserver's defaults passes the check", "[pod_spec]")
{
    const json::object asked = stdlib_pod();
    const auto check = kube::check_pod(asked, admitted(asked));
    CHECK(fields(check).empty());
    CHECK(check.record.at("mismatches").as_array().empty());
    CHECK(check.record.at("metadata").at("uid") == "6f1c0d2e-4a5b-4c3d-9e8f-0a1b2c3d4e5f");
    CHECK(check.record.at("spec").at("containers").at(0).at("securityContext").at("seccompProfile").at(
              "localhostProfile") == "pybox-seccomp-v2.json");
}

// The Pod once its box ended, the kubelet's status naming `image_id` as the image its node ran.
json::value ended(const json::object& asked, std::string image_id)
{
    json::value pod = admitted(asked);
    pod.at("status").as_object()["phase"] = "Succeeded";
    pod.at("status").as_object()["containerStatuses"] = json::array{json::object{
        {"name", "box"},
        {"state", {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}},
        {"image", k_image},
        {"imageID", std::move(image_id)}}};
    return pod;
}

TEST_CASE("Before the box ran, the image it ran is not known", "[pod_spec]")
{
    const json::object asked = stdlib_pod();
    CHECK(kube::check_pod(asked, admitted(asked)).record.at("image_id").is_null());
}

TEST_CASE("The ended box's image, named by the asked digest, passes; another one is a mismatch", "[pod_spec]")
{
    const json::object asked = stdlib_pod();
    const std::string image(k_image);
    const std::string digest = image.substr(image.find('@'));
    const std::string same = "docker-pullable://registry.example:5000/pybox/stdlib" + digest;
    auto check = kube::check_pod(asked, ended(asked, same));
    CHECK(fields(check).empty());
    CHECK(check.record.at("image_id").as_string() == same);

    const std::string other = "docker-pullable://registry.example:5000/pybox/stdlib@sha256:" + std::string(64, 'e');
    check = kube::check_pod(asked, ended(asked, other));
    REQUIRE(fields(check) == std::vector<std::string>{std::string(kube::k_ran_image_field)});
    CHECK(check.mismatches[0].expected == k_image);
    CHECK(check.mismatches[0].observed == other);
    CHECK(check.record.at("image_id").as_string() == other);
    CHECK(check.record.at("mismatches").as_array().size() == 1);
}

TEST_CASE("A quantity the apiserver writes in another notation but of the same value passes", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["resources"].as_object()["limits"].as_object()["memory"] = "134217728";
    pod.at("spec").at("volumes").at(0).at("emptyDir").as_object()["sizeLimit"] = "16384Ki";
    CHECK(kube::check_pod(stdlib_pod(), pod).mismatches.empty());
}

TEST_CASE("A changed value is a mismatch named by its path", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["securityContext"].as_object()["runAsUser"] = 0;
    const auto check = kube::check_pod(stdlib_pod(), pod);
    REQUIRE(check.mismatches.size() == 1);
    CHECK(check.mismatches[0].field == "spec.containers[0].securityContext.runAsUser");
    CHECK(check.mismatches[0].expected == "10000");
    CHECK(check.mismatches[0].observed == "0");
    CHECK(check.record.at("mismatches").as_array().size() == 1);
}

TEST_CASE("A larger memory limit is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["resources"].as_object()["limits"].as_object()["memory"] = "256Mi";
    CHECK(only_mismatch(pod) == "spec.containers[0].resources.limits.memory");
}

TEST_CASE("A termination message kept elsewhere, or taken from the logs, is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["terminationMessagePath"] = "/tmp/termination-log";
    CHECK(only_mismatch(pod) == "spec.containers[0].terminationMessagePath");
    pod = admitted(stdlib_pod());
    box_of(pod)["terminationMessagePolicy"] = "FallbackToLogsOnError";
    CHECK(only_mismatch(pod) == "spec.containers[0].terminationMessagePolicy");
}

TEST_CASE("An extra container is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").at("containers").as_array().push_back(json::parse(R"({"name":"sidecar","image":"envoy"})"));
    CHECK(only_mismatch(pod) == "spec.containers[1]");
}

TEST_CASE("An init container is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").as_object()["initContainers"] = json::parse(R"([{"name":"init","image":"busybox"}])");
    CHECK(only_mismatch(pod) == "spec.initContainers");
}

TEST_CASE("An ephemeral container is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").as_object()["ephemeralContainers"] = json::parse(R"([{"name":"debug","image":"busybox"}])");
    CHECK(only_mismatch(pod) == "spec.ephemeralContainers");
}

TEST_CASE("An extra volume and its mount, such as a service-account token, are mismatches", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").at("volumes").as_array().push_back(
        json::parse(R"({"name":"kube-api-access","projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}})"));
    box_of(pod)["volumeMounts"].as_array().push_back(
        json::parse(R"({"name":"kube-api-access","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"})"));
    const auto check = kube::check_pod(stdlib_pod(), pod);
    CHECK(fields(check) == std::vector<std::string>{"spec.containers[0].volumeMounts[1]", "spec.volumes[1]"});
}

TEST_CASE("A hostPath in place of the memory emptyDir is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").at("volumes").at(0).as_object()["hostPath"] = json::parse(R"({"path":"/"})");
    CHECK(only_mismatch(pod) == "spec.volumes[0].hostPath");
}

TEST_CASE("An extra environment variable is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["env"].as_array().push_back(json::parse(R"({"name":"SECRET","value":"x"})"));
    const auto check = kube::check_pod(stdlib_pod(), pod);
    REQUIRE(check.mismatches.size() == 1);
    CHECK(check.mismatches[0].field == "spec.containers[0].env[3]");
    CHECK(check.mismatches[0].expected == "absent");
    CHECK(check.mismatches[0].observed == R"({"name":"SECRET","value":"x"})");
}

TEST_CASE("envFrom is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["envFrom"] = json::parse(R"([{"secretRef":{"name":"db"}}])");
    CHECK(only_mismatch(pod) == "spec.containers[0].envFrom");
}

TEST_CASE("A privileged container is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["securityContext"].as_object()["privileged"] = true;
    CHECK(only_mismatch(pod) == "spec.containers[0].securityContext.privileged");
}

TEST_CASE("An added capability is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["securityContext"].as_object()["capabilities"].as_object()["add"] = json::parse(R"(["SYS_ADMIN"])");
    CHECK(only_mismatch(pod) == "spec.containers[0].securityContext.capabilities.add");
}

TEST_CASE("A host namespace is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").as_object()["hostNetwork"] = true;
    CHECK(only_mismatch(pod) == "spec.hostNetwork");
}

TEST_CASE("A changed image is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["image"] = "127.0.0.1:5000/pybox/stdlib:latest";
    CHECK(only_mismatch(pod) == "spec.containers[0].image");
}

TEST_CASE("A field the apiserver dropped is a mismatch observed as missing", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["securityContext"].as_object().erase("readOnlyRootFilesystem");
    const auto check = kube::check_pod(stdlib_pod(), pod);
    REQUIRE(check.mismatches.size() == 1);
    CHECK(check.mismatches[0].field == "spec.containers[0].securityContext.readOnlyRootFilesystem");
    CHECK(check.mismatches[0].observed == "missing");
}

TEST_CASE("allowPrivilegeEscalation left out reads as its default, true: a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    box_of(pod)["securityContext"].as_object().erase("allowPrivilegeEscalation");
    CHECK(only_mismatch(pod) == "spec.containers[0].securityContext.allowPrivilegeEscalation");
}

TEST_CASE("A field added to the pod-level security context is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").at("securityContext").as_object()["sysctls"] = json::parse(R"([{"name":"net.core.somaxconn","value":"1"}])");
    CHECK(only_mismatch(pod) == "spec.securityContext.sysctls");
}

TEST_CASE("An annotation other than the seccomp version skew's is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("metadata").at("annotations").as_object()["container.apparmor.security.beta.kubernetes.io/box"] = "unconfined";
    CHECK(only_mismatch(pod) == R"(metadata.annotations["container.apparmor.security.beta.kubernetes.io/box"])");
}

TEST_CASE("A seccomp annotation naming another profile is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("metadata").at("annotations").as_object()["container.seccomp.security.alpha.kubernetes.io/box"] = "unconfined";
    CHECK(only_mismatch(pod) == R"(metadata.annotations["container.seccomp.security.alpha.kubernetes.io/box"])");
}

TEST_CASE("A runtime class, an added label and a finalizer are mismatches", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").as_object()["runtimeClassName"] = "unsandboxed";
    pod.at("metadata").at("labels").as_object()["app"] = "x";
    pod.at("metadata").as_object()["finalizers"] = json::parse(R"(["keep"])");
    const auto check = kube::check_pod(stdlib_pod(), pod);
    auto names = fields(check);
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"metadata.finalizers", "metadata.labels.app", "spec.runtimeClassName"});
}

TEST_CASE("A toleration other than the default ones is a mismatch", "[pod_spec]")
{
    json::value pod = admitted(stdlib_pod());
    pod.at("spec").at("tolerations").as_array().push_back(json::parse(R"({"operator":"Exists"})"));
    CHECK(only_mismatch(pod) == "spec.tolerations");
}

TEST_CASE("An answer that is not a Pod is one mismatch", "[pod_spec]")
{
    const auto check = kube::check_pod(stdlib_pod(), json::value("nope"));
    CHECK(fields(check) == std::vector<std::string>{"pod"});
    CHECK(check.record.at("spec").is_null());
}
