#include "daemon/config/daemon_config.hpp"
#include "daemon/engine/engine_entry.hpp"

#include <catch2/catch.hpp>

#include <string>

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

TEST_CASE("A kind this build has no backend for is refused, naming the kinds it has")
{
    CHECK(rejection(config_with_engines(R"([{"id": "k", "kind": "kubernetes", "url": "unix:///s"}])")) ==
          k_file.string() + ": engines[0] has the kind \"kubernetes\", which is not available in this build (this "
                            "build's kinds: docker).");
    CHECK(rejection(config_with_engines(R"([{"id": "k", "kind": "podman", "url": "unix:///s"}])")) ==
          k_file.string() + ": engines[0] has an unknown kind \"podman\" (this build's kinds: docker).");
    // Kinds are matched exactly: no case folding, no spaces.
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "k", "kind": "Docker", "url": "unix:///s"}])")),
               Catch::Contains("unknown kind \"Docker\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "k", "kind": "", "url": "unix:///s"}])")),
               Catch::Contains("unknown kind \"\""));
    CHECK_THAT(rejection(config_with_engines(R"([{"id": "k", "kind": 1, "url": "unix:///s"}])")),
               Catch::Contains("engines[0] has a key \"kind\" that is not a string"));
    const auto refused = parse_engine_kind("kubernetes");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "config_invalid");
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
