#include "daemon/kube/kubeconfig.hpp"
#include "util/text.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

using pybox::kube::ApiServer;
using pybox::kube::parse_api_server;
using pybox::kube::parse_kubeconfig;
using pybox::kube::read_kubeconfig;

namespace {

namespace fs = std::filesystem;

// A folder with a kubeconfig and the files it may name, removed at the end.
struct KubeconfigFolder {
    fs::path root = fs::temp_directory_path() /
                    ("pybox-unit-kubeconfig-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) +
                     "-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    KubeconfigFolder()
    {
        fs::create_directories(root / "pki");
        write("pki/ca.crt", "CA PEM");
        write("pki/admin.crt", "CERT PEM");
        write("pki/admin.key", "KEY PEM");
        write("token", "  abc.def-123\n");
    }
    ~KubeconfigFolder() { fs::remove_all(root); }
    KubeconfigFolder(const KubeconfigFolder&) = delete;
    KubeconfigFolder& operator=(const KubeconfigFolder&) = delete;
    void write(const std::string& name, const std::string& text) const { std::ofstream(root / name) << text; }
    fs::path file() const { return root / "config"; }
};

// A kubeconfig with one context "ctx" (cluster "c", user "u") and the given cluster and user
// bodies (YAML, indented under `cluster:` and `user:`).
std::string kubeconfig(const std::string& cluster, const std::string& user, const std::string& extra = "")
{
    return "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
           "clusters:\n- name: c\n  cluster:\n" + cluster +
           "users:\n- name: u\n  user:\n" + user +
           "contexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\n    namespace: pybox-test\n" + extra;
}

const std::string k_cluster = "    server: https://127.0.0.1:6443\n    certificate-authority: pki/ca.crt\n";
const std::string k_cert_user = "    client-certificate: pki/admin.crt\n    client-key: pki/admin.key\n";

std::string kubeconfig_refusal(const KubeconfigFolder& folder, const std::string& text, std::optional<std::string> context = {})
{
    auto access = parse_kubeconfig(text, folder.file(), context);
    REQUIRE_FALSE(access.has_value());
    CHECK(access.error().code == "kubeconfig_invalid");
    CHECK_THAT(access.error().message, Catch::Contains(folder.file().string()));
    return access.error().message;
}

}  // namespace

TEST_CASE("A kubeconfig's current context gives the server, the CA, the client certificate and the namespace")
{
    const KubeconfigFolder folder;
    auto access = parse_kubeconfig(kubeconfig(k_cluster, k_cert_user), folder.file(), std::nullopt);
    REQUIRE(access.has_value());
    CHECK(access->context == "ctx");
    CHECK(access->cluster == "c");
    CHECK(access->user == "u");
    CHECK(access->namespace_name == std::optional<std::string>("pybox-test"));
    CHECK((access->server == ApiServer{"127.0.0.1", 6443, "", "https://127.0.0.1:6443"}));
    CHECK(access->ca_pem == "CA PEM");
    CHECK(access->client_cert_pem == "CERT PEM");
    CHECK(access->client_key_pem == "KEY PEM");
    CHECK(access->token.empty());
}

TEST_CASE("A kubeconfig's relative paths are taken against its own folder, absolute ones as they are")
{
    const KubeconfigFolder folder;
    const std::string cluster =
        "    server: https://127.0.0.1:6443\n    certificate-authority: " + (folder.root / "pki/ca.crt").string() + "\n";
    auto access = parse_kubeconfig(kubeconfig(cluster, k_cert_user), folder.file(), std::nullopt);
    REQUIRE(access.has_value());
    CHECK(access->ca_pem == "CA PEM");
    // Not the current folder's pki/: the kubeconfig's.
    CHECK(fs::current_path() != folder.root);
}

TEST_CASE("A kubeconfig's inline data fields are base64")
{
    const KubeconfigFolder folder;
    using pybox::util::base64_encode;
    const std::string cluster =
        "    server: https://k8s.example:443/\n    certificate-authority-data: " + base64_encode("CA DATA") + "\n";
    const std::string user = "    client-certificate-data: " + base64_encode("CERT DATA") +
                             "\n    client-key-data: " + base64_encode("KEY DATA") + "\n";
    auto access = parse_kubeconfig(kubeconfig(cluster, user), folder.file(), std::nullopt);
    REQUIRE(access.has_value());
    CHECK((access->server == ApiServer{"k8s.example", 443, "", "https://k8s.example:443/"}));
    CHECK(access->ca_pem == "CA DATA");
    CHECK(access->client_cert_pem == "CERT DATA");
    CHECK(access->client_key_pem == "KEY DATA");
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig("    server: https://k\n    certificate-authority-data: '@@'\n", k_cert_user)),
               Catch::Contains("cluster \"c\"") && Catch::Contains("`certificate-authority-data` is not valid base64"));
}

TEST_CASE("A kubeconfig's token or tokenFile is the bearer token, without surrounding white space")
{
    const KubeconfigFolder folder;
    auto inline_token = parse_kubeconfig(kubeconfig(k_cluster, "    token: t0k3n\n"), folder.file(), std::nullopt);
    REQUIRE(inline_token.has_value());
    CHECK(inline_token->token == "t0k3n");
    CHECK(inline_token->client_cert_pem.empty());
    auto token_file = parse_kubeconfig(kubeconfig(k_cluster, "    tokenFile: token\n"), folder.file(), std::nullopt);
    REQUIRE(token_file.has_value());
    CHECK(token_file->token == "abc.def-123");
}

TEST_CASE("A kubeconfig's context is the one given, else current-context; an unknown one is refused by name")
{
    const KubeconfigFolder folder;
    const std::string extra = "- name: other\n  context:\n    cluster: c\n    user: u\n";
    auto given = parse_kubeconfig(kubeconfig(k_cluster, k_cert_user, extra), folder.file(), std::string("other"));
    REQUIRE(given.has_value());
    CHECK(given->context == "other");
    CHECK_FALSE(given->namespace_name.has_value());
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, k_cert_user), std::string("nope")),
               Catch::Contains("the engine entry names context \"nope\", which `contexts` does not hold"));
    std::string no_current = kubeconfig(k_cluster, k_cert_user);
    no_current.replace(no_current.find("current-context: ctx\n"), 21, "");
    CHECK_THAT(kubeconfig_refusal(folder, no_current), Catch::Contains("no context was given and `current-context` is not set"));
    std::string unknown_current = kubeconfig(k_cluster, k_cert_user);
    unknown_current.replace(unknown_current.find("current-context: ctx"), 20, "current-context: gone");
    CHECK_THAT(kubeconfig_refusal(folder, unknown_current), Catch::Contains("`current-context` names context \"gone\""));
}

TEST_CASE("A kubeconfig whose context names a missing cluster or user is refused by name")
{
    const KubeconfigFolder folder;
    std::string text = kubeconfig(k_cluster, k_cert_user);
    text.replace(text.find("    user: u\n    namespace"), 11, "    user: x\n");
    CHECK_THAT(kubeconfig_refusal(folder, text), Catch::Contains("context \"ctx\" names user \"x\", which `users` does not hold"));
}

TEST_CASE("A kubeconfig user with an exec or auth-provider plugin is refused, naming the field")
{
    const KubeconfigFolder folder;
    const auto exec = kubeconfig_refusal(folder, kubeconfig(k_cluster, "    exec:\n      command: aws\n      apiVersion: v1\n"));
    CHECK_THAT(exec, Catch::Contains("user \"u\": `exec` (a credential plugin) is not supported"));
    const auto provider = kubeconfig_refusal(folder, kubeconfig(k_cluster, k_cert_user + "    auth-provider:\n      name: gcp\n"));
    CHECK_THAT(provider, Catch::Contains("user \"u\": `auth-provider` (a credential plugin) is not supported"));
}

TEST_CASE("A kubeconfig cluster with insecure-skip-tls-verify true is refused; false is allowed")
{
    const KubeconfigFolder folder;
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster + "    insecure-skip-tls-verify: true\n", k_cert_user)),
               Catch::Contains("cluster \"c\": `insecure-skip-tls-verify` is true"));
    CHECK(parse_kubeconfig(kubeconfig(k_cluster + "    insecure-skip-tls-verify: false\n", k_cert_user), folder.file(),
                           std::nullopt)
              .has_value());
}

TEST_CASE("A kubeconfig server that is not https is refused, naming the field")
{
    const KubeconfigFolder folder;
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig("    server: http://127.0.0.1:8080\n    certificate-authority: pki/ca.crt\n",
                                          k_cert_user)),
               Catch::Contains("cluster \"c\": `server` \"http://127.0.0.1:8080\" is not an https:// URL"));
}

TEST_CASE("A kubeconfig cluster without a CA is refused")
{
    const KubeconfigFolder folder;
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig("    server: https://127.0.0.1:6443\n", k_cert_user)),
               Catch::Contains("neither `certificate-authority` nor `certificate-authority-data` is given"));
}

TEST_CASE("A kubeconfig user without credentials, or with half or two kinds of them, is refused")
{
    const KubeconfigFolder folder;
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, "    {}\n")), Catch::Contains("user \"u\": no credentials"));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, "    client-certificate: pki/admin.crt\n")),
               Catch::Contains("a client certificate is given without its key"));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, k_cert_user + "    token: t\n")),
               Catch::Contains("both a client certificate and a token are given"));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, "    token: t\n    tokenFile: token\n")),
               Catch::Contains("both `token` and `tokenFile` are given"));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, k_cert_user + "    client-key-data: S0VZ\n")),
               Catch::Contains("both `client-key` and `client-key-data` are given"));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, "    username: admin\n    password: secret\n")),
               Catch::Contains("`username` (basic authentication) is not supported"));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, k_cert_user + "    as: someone\n")),
               Catch::Contains("`as` (impersonation) is not supported"));
}

TEST_CASE("A kubeconfig naming a missing or oversized credential file is refused, naming the field and file")
{
    const KubeconfigFolder folder;
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, "    client-certificate: pki/none.crt\n    client-key: pki/admin.key\n")),
               Catch::Contains("`client-certificate` " + (folder.root / "pki/none.crt").string() + " cannot be used"));
    folder.write("big", std::string(256 * 1024 + 1, 'x'));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, "    tokenFile: big\n")), Catch::Contains("`tokenFile`"));
}

TEST_CASE("Text that is not a kubeconfig is refused: bad YAML, not a map, another kind, a repeated key, too large")
{
    const KubeconfigFolder folder;
    CHECK_THAT(kubeconfig_refusal(folder, "clusters: [\n"), Catch::Contains("it is not valid YAML"));
    CHECK_THAT(kubeconfig_refusal(folder, "- a\n- b\n"), Catch::Contains("it is not a kubeconfig"));
    CHECK_THAT(kubeconfig_refusal(folder, "kind: Pod\n"), Catch::Contains("`kind` is \"Pod\", not \"Config\""));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster + "    server: https://other:6443\n", k_cert_user)),
               Catch::Contains("`server` is given twice"));
    CHECK_THAT(kubeconfig_refusal(folder, std::string(1024 * 1024 + 1, '#')), Catch::Contains("larger than"));
    CHECK_THAT(kubeconfig_refusal(folder, kubeconfig(k_cluster, k_cert_user, "- name: ctx\n  context: {cluster: c, user: u}\n")),
               Catch::Contains("`contexts` names \"ctx\" twice"));
}

TEST_CASE("read_kubeconfig reads the file, and says so when it cannot")
{
    const KubeconfigFolder folder;
    folder.write("config", kubeconfig(k_cluster, k_cert_user));
    auto access = read_kubeconfig(folder.file(), std::nullopt);
    REQUIRE(access.has_value());
    CHECK(access->client_key_pem == "KEY PEM");
    auto missing = read_kubeconfig(folder.root / "none", std::nullopt);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == "kubeconfig_invalid");
    CHECK_THAT(missing.error().message, Catch::Contains("cannot be read"));
}

TEST_CASE("An apiserver URL gives host, port and base path; anything but https is refused")
{
    CHECK((*parse_api_server("https://10.0.0.1", "s") == ApiServer{"10.0.0.1", 443, "", "https://10.0.0.1"}));
    CHECK((*parse_api_server("https://[::1]:6443", "s") == ApiServer{"::1", 6443, "", "https://[::1]:6443"}));
    CHECK((*parse_api_server("https://rancher.example/k8s/clusters/c-1/", "s") ==
          ApiServer{"rancher.example", 443, "/k8s/clusters/c-1", "https://rancher.example/k8s/clusters/c-1/"}));
    for (const char* bad : {"http://h", "h:6443", "https://", "https://h:0", "https://h:65536", "https://h:x",
                            "https://u@h", "https://h/a?b", "https://[::1", "https://h:"}) {
        INFO(bad);
        auto parsed = parse_api_server(bad, "cluster \"c\": `server`");
        REQUIRE_FALSE(parsed.has_value());
        CHECK(parsed.error().code == "kubeconfig_invalid");
        CHECK_THAT(parsed.error().message, Catch::StartsWith("cluster \"c\": `server` \""));
    }
}
