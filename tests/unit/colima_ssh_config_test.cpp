#include "daemon/macos/colima_ssh_config.hpp"

#include "tests/support/source_text.hpp"

#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

using namespace pybox;
using namespace pybox::macos;

namespace {

using pybox::test::replaced;


// `colima ssh-config --profile pybox` with colima 0.10 and Lima 1.x on an Apple-silicon Mac.
const std::string k_config =
    "# This SSH config file can be passed to 'ssh -F'.\n"
    "# This file is created by Lima, but not used by Lima itself currently.\n"
    "# Modifications to this file will be lost on restarting the Lima instance.\n"
    "Host colima-pybox\n"
    "  IdentityFile \"/Users/ada/.pybox/runtime/colima/_lima/_config/user\"\n"
    "  StrictHostKeyChecking no\n"
    "  UserKnownHostsFile /dev/null\n"
    "  NoHostAuthenticationForLocalhost yes\n"
    "  PreferredAuthentications publickey\n"
    "  Compression no\n"
    "  BatchMode yes\n"
    "  IdentitiesOnly yes\n"
    "  GSSAPIAuthentication no\n"
    "  Ciphers \"^aes128-gcm@openssh.com,aes256-gcm@openssh.com\"\n"
    "  User ada\n"
    "  ControlMaster auto\n"
    "  ControlPath \"/Users/ada/.pybox/runtime/colima/_lima/colima-pybox/ssh.sock\"\n"
    "  ControlPersist yes\n"
    "  Hostname 127.0.0.1\n"
    "  Port 60022\n"
    "\n";

// The VM's /etc/ssh/ssh_host_ed25519_key.pub and what `ssh-keygen -lf` printed for it.
const std::string k_host_key =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHBrDrVvZOPZz6u1+ItItDCcdBz11Z9swXD2365GL8// root@colima-pybox\n";
const std::string k_fingerprint = "SHA256:VZ25S2eYzkLAezlMX5f77FRikwEEkGc2jTPQIxihLe8";

}  // namespace

TEST_CASE("colima's ssh config yields the VM's user, loopback port and Lima's key")
{
    const auto config = parse_colima_ssh_config(k_config, ColimaLayout(pybox::test::k_mac_user_paths));
    REQUIRE(config.has_value());
    CHECK(config->address == engine::SshAddress{"ada", "127.0.0.1", 60022});
    CHECK(config->identity_file == "/Users/ada/.pybox/runtime/colima/_lima/_config/user");
    CHECK_FALSE(config->known_hosts.has_value());
}

TEST_CASE("An ssh config that runs commands, includes files or forwards the agent is refused")
{
    const ColimaLayout layout(pybox::test::k_mac_user_paths);
    for (const std::string extra : {"  ProxyCommand nc %h %p\n", "  LocalCommand touch /tmp/x\n", "  Include ~/.ssh/x\n",
                                    "  ForwardAgent yes\n", "  ForwardX11 yes\n", "  LocalForward 8080 127.0.0.1:80\n",
                                    "Host other\n", "  User root\n", "  Match all\n"}) {
        INFO(extra);
        const auto config = parse_colima_ssh_config(k_config + extra, layout);
        REQUIRE_FALSE(config.has_value());
        CHECK(config.error().code == "colima_output_invalid");
    }
    CHECK(parse_colima_ssh_config(k_config + "  ForwardAgent no\n", layout).has_value());
}

TEST_CASE("An ssh config for another host, key, address or port is refused, naming what is wrong")
{
    const ColimaLayout layout(pybox::test::k_mac_user_paths);
    const auto refused = [&](const std::string& text, const std::string& why) {
        const auto config = parse_colima_ssh_config(text, layout);
        REQUIRE_FALSE(config.has_value());
        CHECK_THAT(config.error().message, Catch::Contains(why));
    };
    refused(replaced(k_config, "Host colima-pybox", "Host colima"), "not colima-pybox");
    refused(replaced(k_config, "/Users/ada/.pybox/runtime/colima/_lima/_config/user", "/Users/ada/.ssh/id_ed25519"),
            "not Lima's");
    refused(replaced(k_config, "Hostname 127.0.0.1", "Hostname 192.168.5.15"), "not 127.0.0.1");
    refused(replaced(k_config, "Port 60022", "Port 0"), "not 1-65535");
    refused(replaced(k_config, "Port 60022", "Port 70000"), "not 1-65535");
    refused(replaced(k_config, "Port 60022", "Port 22x"), "not 1-65535");
    refused(replaced(k_config, "User ada", "User a;b"), "not a user name");
    refused(replaced(k_config, "  Port 60022\n", ""), "lacks the key port");
    refused(replaced(k_config, "Host colima-pybox\n", ""), "before the Host line");
    refused(k_config + "  Port 60023\n", "repeats the key");
    refused(replaced(k_config, "User ada", "User a\x1b[2J"), "control or non-ASCII byte");
    refused(std::string(k_max_ssh_config_bytes + 1, '#'), "over 16384 bytes");
}

TEST_CASE("A UserKnownHostsFile other than /dev/null becomes the pinned known_hosts")
{
    const auto config = parse_colima_ssh_config(
        replaced(k_config, "UserKnownHostsFile /dev/null", "UserKnownHostsFile /Users/ada/.pybox/runtime/colima/known_hosts"),
        ColimaLayout(pybox::test::k_mac_user_paths));
    REQUIRE(config.has_value());
    CHECK(config->known_hosts == std::filesystem::path("/Users/ada/.pybox/runtime/colima/known_hosts"));
}

TEST_CASE("The VM's host key fingerprint is the one ssh-keygen -lf prints")
{
    const auto fingerprint = host_key_fingerprint(k_host_key);
    REQUIRE(fingerprint.has_value());
    CHECK(*fingerprint == k_fingerprint);
    CHECK(engine::is_sha256_fingerprint(*fingerprint));
}

TEST_CASE("A host key line that is not one ed25519 key is refused")
{
    for (const std::string& line :
         {std::string("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ root@x\n"), std::string("ssh-ed25519 !!!!\n"),
          std::string("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHBrDrVvZOPZz6u1+ItItDCcdBz11Z9swXD2365GL8/\n"),
          // An RSA blob under the ed25519 name.
          std::string("ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQABAAAAgQC7\n"), std::string("")}) {
        INFO(line);
        const auto fingerprint = host_key_fingerprint(line);
        REQUIRE_FALSE(fingerprint.has_value());
        CHECK(fingerprint.error().code == "colima_output_invalid");
    }
}

TEST_CASE("The host key pin file round-trips one fingerprint and refuses anything else")
{
    CHECK(parse_host_key_pin(host_key_pin_text(k_fingerprint)).value() == k_fingerprint);
    CHECK(parse_host_key_pin(k_fingerprint).error().code == "host_key_pin_invalid");
    CHECK_FALSE(parse_host_key_pin("SHA256:short\n").has_value());
    CHECK_FALSE(parse_host_key_pin(host_key_pin_text(k_fingerprint) + "\n").has_value());
}

TEST_CASE("The watcher's ssh target is the VM's Docker socket through Lima's key with the host key pinned")
{
    const auto config = parse_colima_ssh_config(k_config, ColimaLayout(pybox::test::k_mac_user_paths)).value();
    const auto target = colima_ssh_engine(config, k_fingerprint);
    REQUIRE(target.has_value());
    CHECK(target->address == engine::SshAddress{"ada", "127.0.0.1", 60022});
    CHECK(target->engine_socket == "/var/run/docker.sock");
    CHECK(target->identity_file == "/Users/ada/.pybox/runtime/colima/_lima/_config/user");
    CHECK(target->host_key_sha256 == std::optional<std::string>(k_fingerprint));
    CHECK_FALSE(target->known_hosts.has_value());

    const auto unpinned = colima_ssh_engine(config, std::nullopt);
    REQUIRE_FALSE(unpinned.has_value());
    CHECK(unpinned.error().code == "host_key_unpinned");
}
