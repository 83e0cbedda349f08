#include "daemon/config/daemon_config.hpp"
#include "daemon/engine/engine_entry.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace pybox::engine;
using pybox::config::parse_daemon_config;

namespace {

const std::filesystem::path k_file = "/home/u/.pybox/runtime/config.json";
const std::string k_fingerprint = "SHA256:" + std::string(43, 'A');

std::string config_with_engines(const std::string& engines) { return R"({"engines": )" + engines + "}"; }

std::string rejection(const std::string& text)
{
    auto config = parse_daemon_config(text, k_file);
    REQUIRE_FALSE(config.has_value());
    CHECK(config.error().code == "config_invalid");
    return config.error().message;
}

}  // namespace

TEST_CASE("An ssh URL gives user, host and port, 22 by default")
{
    auto plain = parse_ssh_address("ssh://pybox@build-1.example.org");
    REQUIRE(plain.has_value());
    CHECK(*plain == SshAddress{"pybox", "build-1.example.org", 22});
    auto port = parse_ssh_address("ssh://u@127.0.0.1:2222");
    REQUIRE(port.has_value());
    CHECK(*port == SshAddress{"u", "127.0.0.1", 2222});
    auto ipv6 = parse_ssh_address("ssh://u@[::1]:2200");
    REQUIRE(ipv6.has_value());
    CHECK(*ipv6 == SshAddress{"u", "::1", 2200});
}

TEST_CASE("A malformed ssh URL is refused")
{
    for (const char* url : {"ssh://host", "ssh://@host", "ssh://u:secret@host", "ssh://u@", "ssh://u@host:",
                            "ssh://u@host:0", "ssh://u@host:65536", "ssh://u@host:22/path", "ssh://u@host:022",
                            "ssh://u@-host", "ssh://u@ho st", "ssh://u@[::1", "ssh://u@[::1]x", "ssh://-u@host",
                            "http://u@host", "ssh://u@host:22x"}) {
        INFO(url);
        CHECK_FALSE(parse_ssh_address(url).has_value());
    }
}

TEST_CASE("A host key fingerprint is SHA256: and 43 base64 characters")
{
    CHECK(is_sha256_fingerprint(k_fingerprint));
    CHECK(is_sha256_fingerprint("SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"));
    CHECK_FALSE(is_sha256_fingerprint("SHA256:" + std::string(42, 'A')));
    CHECK_FALSE(is_sha256_fingerprint("SHA256:" + std::string(43, 'A') + "="));
    CHECK_FALSE(is_sha256_fingerprint("MD5:" + std::string(43, 'A')));
    CHECK_FALSE(is_sha256_fingerprint("SHA256:" + std::string(42, 'A') + "-"));
}

TEST_CASE("Engines beside the local one are read: a unix socket and an ssh host")
{
    auto config = parse_daemon_config(
        config_with_engines(R"([{"id": "second", "url": "unix:///run/other/docker.sock"},
            {"id": "lab-1", "url": "ssh://pybox@10.0.0.5:2222", "engine_socket": "/run/docker.sock",
             "identity_file": "/home/u/.pybox/keys/lab", "host_key": ")" + k_fingerprint + R"("}])"),
        k_file);
    REQUIRE(config.has_value());
    CHECK(config->local_engine);
    REQUIRE(config->engines.size() == 2);
    CHECK(config->engines[0].id == "second");
    CHECK(std::get<UnixSocketEngine>(config->engines[0].where).socket == "/run/other/docker.sock");
    CHECK(describe_engine_entry(config->engines[0]) == "unix:///run/other/docker.sock");
    const auto& ssh = std::get<SshEngine>(config->engines[1].where);
    CHECK(ssh.address == SshAddress{"pybox", "10.0.0.5", 2222});
    CHECK(ssh.engine_socket == "/run/docker.sock");
    CHECK(ssh.identity_file == "/home/u/.pybox/keys/lab");
    CHECK(ssh.host_key_sha256 == k_fingerprint);
    CHECK_FALSE(ssh.known_hosts);
    CHECK(describe_engine_entry(config->engines[1]) == "ssh://pybox@10.0.0.5:2222");
}

TEST_CASE("An entry's kind is docker, said or not; the kind's name is config.json's")
{
    auto config = parse_daemon_config(config_with_engines(R"([{"id": "said", "kind": "docker", "url": "unix:///run/a.sock"},
                                                              {"id": "unsaid", "url": "unix:///run/b.sock"}])"),
                                      k_file);
    REQUIRE(config.has_value());
    REQUIRE(config->engines.size() == 2);
    CHECK(config->engines[0].kind == EngineKind::docker);
    CHECK(config->engines[1].kind == EngineKind::docker);
    CHECK(engine_kind_name(EngineKind::docker) == "docker");
    const auto docker = parse_engine_kind("docker");
    REQUIRE(docker.has_value());
    CHECK(*docker == EngineKind::docker);
}

TEST_CASE("A kind config.json does not know is refused, naming the kinds there are")
{
    CHECK(rejection(config_with_engines(R"([{"id": "k", "kind": "podman", "url": "unix:///s"}])")) ==
          k_file.string() + ": engines[0] has an unknown kind \"podman\" (this build's kinds: docker, kubernetes).");
    // Kinds are matched exactly: no case folding, no spaces.
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "k", "kind": "Docker", "url": "unix:///s"}])")),
               Catch::Contains("unknown kind \"Docker\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "k", "kind": "Kubernetes", "kubeconfig": "/k"}])")),
               Catch::Contains("unknown kind \"Kubernetes\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "k", "kind": "", "url": "unix:///s"}])")),
               Catch::Contains("unknown kind \"\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "k", "kind": 1, "url": "unix:///s"}])")),
               Catch::Contains("engines[0] has a key \"kind\" that is not a string"));
    const auto refused = parse_engine_kind("podman");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "config_invalid");
    const auto kubernetes = parse_engine_kind("kubernetes");
    REQUIRE(kubernetes.has_value());
    CHECK(*kubernetes == EngineKind::kubernetes);
    CHECK(engine_kind_name(EngineKind::kubernetes) == "kubernetes");
}

TEST_CASE("An ssh engine may pin its host key with a known_hosts file instead")
{
    auto config = parse_daemon_config(
        config_with_engines(R"([{"id": "lab", "url": "ssh://u@[fe80::1]", "engine_socket": "/run/docker.sock",
            "identity_file": "/k/id", "known_hosts": "/k/known_hosts"}])"),
        k_file);
    REQUIRE(config.has_value());
    const auto& ssh = std::get<SshEngine>(config->engines[0].where);
    CHECK(ssh.known_hosts == std::filesystem::path("/k/known_hosts"));
    CHECK(describe_engine_entry(config->engines[0]) == "ssh://u@[fe80::1]:22");
}

TEST_CASE("local_engine false needs another engine")
{
    CHECK_THAT(rejection(R"({"local_engine": false})"), Catch::Contains("at least one entry in \"engines\""));
    CHECK(rejection(R"({"local_engine": "no"})").find("true or false") != std::string::npos);
}

TEST_CASE("Bad engine entries are refused, naming the entry and the reason")
{
    const std::string ssh_base = R"("url": "ssh://u@h", "engine_socket": "/s", "identity_file": "/k")";
    CHECK_THAT(rejection(config_with_engines("{}")), Catch::Contains("must be an array"));
    CHECK_THAT(rejection(config_with_engines("[1]")), Catch::Contains("engines[0] must be an object"));
    CHECK_THAT(rejection(config_with_engines(R"([{"url": "unix:///s"}])")), Catch::Contains("needs an \"id\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "Lab", "url": "unix:///s"}])")), Catch::Contains("lowercase"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "local", "url": "unix:///s"}])")),
               Catch::Contains("may not use the id \"local\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "unix:///s"}, {"id": "a", "url": "unix:///t"}])")),
               Catch::Contains("engines[1] repeats the id \"a\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "tcp://h:2375"}])")),
               Catch::Contains("neither unix:///path nor ssh://"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "unix://relative"}])")),
               Catch::Contains("absolute path"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "unix:///s", "identity_file": "/k"}])")),
               Catch::Contains("belong to ssh engines"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "unix:///s", "password": "x"}])")),
               Catch::Contains("unknown key \"password\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "ssh://u@h", "identity_file": "/k", "host_key": ")" +
                                             k_fingerprint + R"("}])")),
               Catch::Contains("needs \"engine_socket\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", )" + ssh_base + "}]")),
               Catch::Contains("exactly one pinned host key"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", )" + ssh_base + R"(, "known_hosts": "/kh", "host_key": ")" +
                                             k_fingerprint + R"("}])")),
               Catch::Contains("exactly one pinned host key"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", )" + ssh_base + R"(, "host_key": "SHA256:short"}])")),
               Catch::Contains("ssh-keygen -lf"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "ssh://u@h", "engine_socket": "/run/a,b.sock", "identity_file": "/k", "host_key": ")" +
                                             k_fingerprint + R"("}])")),
               Catch::Contains("may hold only letters, digits and /._@+-"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "a", "url": "ssh://u:pw@h", "engine_socket": "/s", "identity_file": "/k", "host_key": ")" +
                                             k_fingerprint + R"("}])")),
               Catch::Contains("password"));
    std::string nine = "[";
    for (int i = 0; i < 9; ++i) nine += std::string(i ? "," : "") + R"({"id": "e)" + std::to_string(i) + R"(", "url": "unix:///s"})";
    CHECK_THAT(rejection(config_with_engines(nine + "]")), Catch::Contains("more than 8 engines"));
}

namespace {

// The engines array of one kubernetes entry with every key it needs, `changes` set (JSON text
// values) and `without` left out.
std::string cluster_entry(const std::map<std::string, std::string>& changes = {}, const std::string& without = "")
{
    std::map<std::string, std::string> entry{{"id", R"("cluster")"},
                                             {"kind", R"("kubernetes")"},
                                             {"kubeconfig", R"("/home/u/.kube/config")"},
                                             {"namespace", R"("pybox-runs")"},
                                             {"image_registry", R"("127.0.0.1:5000/pybox")"}};
    for (const auto& [key, value] : changes) entry[key] = value;
    entry.erase(without);
    std::string text;
    for (const auto& [key, value] : entry) text += (text.empty() ? "" : ", ") + ("\"" + key + "\": " + value);
    return "[{" + text + "}]";
}

}  // namespace

TEST_CASE("A kubernetes entry is read with its defaults: the current context, 8 runs, the seed's pids limit")
{
    auto config = parse_daemon_config(config_with_engines(cluster_entry()), k_file);
    REQUIRE(config.has_value());
    REQUIRE(config->engines.size() == 1);
    const auto& entry = config->engines[0];
    CHECK(entry.id == "cluster");
    CHECK(entry.kind == EngineKind::kubernetes);
    const auto& cluster = std::get<KubeEngine>(entry.where);
    CHECK(cluster.kubeconfig == "/home/u/.kube/config");
    CHECK_FALSE(cluster.context);
    CHECK(cluster.namespace_name == "pybox-runs");
    CHECK(cluster.image_registry == "127.0.0.1:5000/pybox");
    CHECK(cluster.max_runs == 8);
    CHECK_FALSE(cluster.pids_limit_node);
    CHECK(describe_engine_entry(entry) == "kubernetes:pybox-runs@current-context");
}

TEST_CASE("A kubernetes entry may name its context, its runs at once and the node's pids limit")
{
    auto config = parse_daemon_config(
        config_with_engines(cluster_entry({{"context", R"("kubernetes-admin@kubernetes")"}, {"max_runs", "64"}, {"pids_limit", R"("node")"}})),
        k_file);
    REQUIRE(config.has_value());
    const auto& cluster = std::get<KubeEngine>(config->engines[0].where);
    CHECK(cluster.context == std::optional<std::string>("kubernetes-admin@kubernetes"));
    CHECK(cluster.max_runs == 64);
    CHECK(cluster.pids_limit_node);
    CHECK(describe_engine_entry(config->engines[0]) == "kubernetes:pybox-runs@kubernetes-admin@kubernetes");
    auto one = parse_daemon_config(config_with_engines(cluster_entry({{"max_runs", "1"}})), k_file);
    REQUIRE(one.has_value());
    CHECK(std::get<KubeEngine>(one->engines[0].where).max_runs == 1);
}

TEST_CASE("A kubernetes entry's kubeconfig is not read when config.json is")
{
    // No such file: the backend reads it, and a bad one is a vm status problem, not a config error.
    auto config = parse_daemon_config(
        config_with_engines(R"([{"id": "c", "kind": "kubernetes", "kubeconfig": "/nonexistent/kubeconfig",
                                 "namespace": "default", "image_registry": "registry.example:5000/pybox"}])"),
        k_file);
    REQUIRE(config.has_value());
    CHECK(std::get<KubeEngine>(config->engines[0].where).kubeconfig == "/nonexistent/kubeconfig");
}

TEST_CASE("A kubernetes entry lacking a key it needs is refused, naming the key")
{
    CHECK(rejection(config_with_engines(cluster_entry({}, "kubeconfig"))) ==
          k_file.string() + ": engines[0] needs \"kubeconfig\", the cluster's kubeconfig on this host.");
    CHECK(rejection(config_with_engines(cluster_entry({}, "namespace"))) ==
          k_file.string() + ": engines[0] needs \"namespace\", the namespace its Pods are made in.");
    CHECK(rejection(config_with_engines(cluster_entry({}, "image_registry"))) ==
          k_file.string() + ": engines[0] needs \"image_registry\", the HOST[:PORT]/PREFIX its images are pushed to.");
}

TEST_CASE("A kubernetes entry's malformed values are refused, each naming its key")
{
    const auto refused = [](const std::string& entries, const std::string& needle) {
        INFO(entries);
        CHECK_THAT(rejection(config_with_engines(entries)), Catch::Contains(needle) && Catch::Contains("engines[0]"));
    };
    refused(cluster_entry({{"kubeconfig", R"("kube/config")"}}), "key \"kubeconfig\"");
    refused(cluster_entry({{"kubeconfig", "7"}}), "key \"kubeconfig\"");
    const std::vector<std::string> bad_namespaces{R"("Pybox")", R"("-pybox")", R"("pybox-")", R"("py_box")",
                                                  R"("py.box")", R"("")", "7", "\"" + std::string(64, 'a') + "\""};
    for (const auto& bad : bad_namespaces)
        refused(cluster_entry({{"namespace", bad}}), "\"namespace\" that is not a DNS-1123 label");
    for (const char* bad : {R"("127.0.0.1:5000")", R"("127.0.0.1:5000/Pybox")", R"("h:0/p")", R"("h/p:tag")", R"("")"})
        refused(cluster_entry({{"image_registry", bad}}), "\"image_registry\" that is not HOST[:PORT]/PREFIX: ");
    refused(cluster_entry({{"image_registry", "5000"}}), "\"image_registry\" that is not a string");
    for (const char* bad : {"0", "65", "-1", "8.5", R"("8")", "true"})
        refused(cluster_entry({{"max_runs", bad}}), "key \"max_runs\" must be a whole number from 1 to 64");
    for (const char* bad : {R"("Node")", R"("32")", "32", R"("")", "true"})
        refused(cluster_entry({{"pids_limit", bad}}), "\"pids_limit\" other than \"node\"");
    const std::vector<std::string> bad_contexts{R"("")", R"("my context")", R"("tab\tcontext")", "1",
                                                "\"" + std::string(254, 'c') + "\""};
    for (const auto& bad : bad_contexts)
        refused(cluster_entry({{"context", bad}}), "\"context\" that is not 1-253 visible ASCII");
}

TEST_CASE("A kubernetes entry with a docker entry's keys is refused, naming them, and the other way round")
{
    CHECK(rejection(config_with_engines(cluster_entry({{"url", R"("unix:///run/docker.sock")"}}))) ==
          k_file.string() + ": engines[0] is a kubernetes engine, and \"url\" belongs to docker engines.");
    CHECK(rejection(config_with_engines(
              R"([{"id": "c", "kind": "kubernetes", "engine_socket": "/s", "identity_file": "/k", "host_key": "x"}])")) ==
          k_file.string() + ": engines[0] is a kubernetes engine, and \"engine_socket\", \"identity_file\" and \"host_key\" "
                            "belong to docker engines.");
    CHECK(rejection(config_with_engines(R"([{"id": "d", "kind": "docker", "url": "unix:///s", "namespace": "n"}])")) ==
          k_file.string() + ": engines[0] is a docker engine, and \"namespace\" belongs to kubernetes engines.");
    // Without "kind" an entry is a docker one, and the refusal says why it is taken as one.
    CHECK(rejection(config_with_engines(R"([{"id": "c", "kubeconfig": "/k", "namespace": "n", "image_registry": "h:5/p"}])")) ==
          k_file.string() + ": engines[0] is a docker engine (no \"kind\" says otherwise), and \"kubeconfig\", "
                            "\"namespace\" and \"image_registry\" belong to kubernetes engines.");
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "d", "url": "unix:///s", "max_runs": 2}])")),
               Catch::Contains("\"max_runs\" belongs to kubernetes engines"));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "d", "url": "unix:///s", "pids_limit": "node"}])")),
               Catch::Contains("\"pids_limit\" belongs to kubernetes engines"));
}

TEST_CASE("A kubernetes entry beside docker ones shares the id rules")
{
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "cluster", "url": "unix:///s"}, )" + cluster_entry().substr(1))),
               Catch::Contains("engines[1] repeats the id \"cluster\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "local", "kind": "kubernetes", "kubeconfig": "/k", "namespace": "n",
                                                 "image_registry": "h:5/p"}])")),
               Catch::Contains("may not use the id \"local\""));
}

TEST_CASE("A namespace is a DNS-1123 label: 1-63 of a-z, 0-9 and '-', a letter or digit at each end")
{
    for (const char* good : {"a", "0", "default", "pybox-runs", "kube-system", "a1-b2", "9lives"}) {
        INFO(good);
        CHECK(is_dns_label(good));
    }
    CHECK(is_dns_label(std::string(63, 'n')));
    CHECK_FALSE(is_dns_label(std::string(64, 'n')));
    for (const char* bad : {"", "-a", "a-", "-", "A", "Default", "a_b", "a.b", "a b", "\xc3\xa9", "a\n"}) {
        INFO(bad);
        CHECK_FALSE(is_dns_label(bad));
    }
}

TEST_CASE("A context name is 1-253 visible ASCII characters")
{
    CHECK(is_context_name("kubernetes-admin@kubernetes"));
    CHECK(is_context_name("arn:aws:eks:eu-west-1:123456789012:cluster/prod"));
    CHECK(is_context_name("gke_project_zone_name"));
    CHECK(is_context_name(std::string(253, 'c')));
    CHECK_FALSE(is_context_name(std::string(254, 'c')));
    for (const char* bad : {"", "a b", "a\tb", "a\x7f", "\xc3\xa9"}) {
        INFO(bad);
        CHECK_FALSE(is_context_name(bad));
    }
}
