#include "daemon/macos/colima_profile.hpp"

#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace pybox;
using namespace pybox::macos;

namespace {

const std::filesystem::path k_colima = "/opt/homebrew/bin/colima";

bool has_flag(const std::vector<std::string>& argv, const std::string& flag, const std::string& value)
{
    const auto at = std::find(argv.begin(), argv.end(), flag);
    return at != argv.end() && at + 1 != argv.end() && *(at + 1) == value;
}

}  // namespace

TEST_CASE("The colima profile's files all live under the runtime folder, as the reference lists them")
{
    const ColimaLayout layout(pybox::test::k_mac_user_paths);
    CHECK(layout.colima_home == "/Users/ada/.pybox/runtime/colima");
    CHECK(layout.docker_socket == "/Users/ada/.pybox/runtime/colima/pybox/docker.sock");
    CHECK(layout.containerd_socket == "/Users/ada/.pybox/runtime/colima/pybox/containerd.sock");
    CHECK(layout.lima_home == "/Users/ada/.pybox/runtime/colima/_lima");
    CHECK(layout.override_file == "/Users/ada/.pybox/runtime/colima/_lima/_config/override.yaml");
    CHECK(layout.lima_key == "/Users/ada/.pybox/runtime/colima/_lima/_config/user");
    CHECK(layout.instance_dir == "/Users/ada/.pybox/runtime/colima/_lima/colima-pybox");
    CHECK(layout.hostagent_log == "/Users/ada/.pybox/runtime/colima/_lima/colima-pybox/ha.stderr.log");
    CHECK(layout.host_key_pin == "/Users/ada/.pybox/runtime/colima/pybox-host-key");
    CHECK(layout.docker_config_file == "/Users/ada/.pybox/runtime/docker/config.json");
}

TEST_CASE("colima start names the profile, the sizes, vz, arm64 and docker, and turns off mounts and forwarding")
{
    const auto argv = colima_start_argv(k_colima);
    REQUIRE(argv.size() > 4);
    CHECK(argv[0] == "/opt/homebrew/bin/colima");
    CHECK(argv[1] == "start");
    CHECK(has_flag(argv, "--profile", "pybox"));
    CHECK(has_flag(argv, "--cpus", std::to_string(k_vm_cpus)));
    CHECK(has_flag(argv, "--memory", std::to_string(k_vm_memory_gib)));
    CHECK(has_flag(argv, "--disk", std::to_string(k_vm_disk_gib)));
    CHECK(has_flag(argv, "--vm-type", "vz"));
    CHECK(has_flag(argv, "--arch", "aarch64"));
    CHECK(has_flag(argv, "--runtime", "docker"));
    CHECK(has_flag(argv, "--mount", "none"));
    CHECK(has_flag(argv, "--port-forwarder", "none"));
    for (const auto* off : {"--network-address=false", "--kubernetes=false", "--ssh-agent=false", "--ssh-config=false",
                            "--activate=false", "--template=false", "--binfmt=false"})
        CHECK(std::find(argv.begin(), argv.end(), off) != argv.end());
}

TEST_CASE("Every colima command names the profile pybox")
{
    for (const auto& argv : {colima_stop_argv(k_colima), colima_status_argv(k_colima), colima_ssh_config_argv(k_colima),
                             colima_ssh_argv(k_colima, guest_mounts_command())})
        CHECK(has_flag(argv, "--profile", "pybox"));
    CHECK(colima_status_argv(k_colima).back() == "--json");
    CHECK(colima_version_argv(k_colima) == std::vector<std::string>{"/opt/homebrew/bin/colima", "version"});
}

TEST_CASE("colima ssh runs a fixed command after --")
{
    CHECK(colima_ssh_argv(k_colima, guest_host_key_command()) ==
          std::vector<std::string>{"/opt/homebrew/bin/colima", "ssh", "--profile", "pybox", "--", "cat",
                                   "/etc/ssh/ssh_host_ed25519_key.pub"});
    CHECK(guest_mounts_command() == std::vector<std::string>{"cat", "/proc/self/mounts"});
}

TEST_CASE("colima runs with PyBox's own homes, the anonymous Docker config, and a PATH of trusted folders only")
{
    const auto env = colima_environment(ColimaLayout(pybox::test::k_mac_user_paths), k_colima);
    CHECK(env.at("COLIMA_HOME") == "/Users/ada/.pybox/runtime/colima");
    CHECK(env.at("LIMA_HOME") == "/Users/ada/.pybox/runtime/colima/_lima");
    CHECK(env.at("DOCKER_CONFIG") == "/Users/ada/.pybox/runtime/docker");
    CHECK(env.at("PATH") == "/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin");
    CHECK(env.size() == 4);
}

TEST_CASE("override.yaml ignores every port of the VM and keeps ~/.ssh keys out")
{
    CHECK(override_yaml() ==
          "# Written by PyBox on every `pybox vm start`; edits are lost.\n"
          "# No port the VM listens on is forwarded to this Mac (the Docker socket has its own\n"
          "# socket rule, which this port rule does not touch).\n"
          "portForwards:\n"
          "  - guestIP: \"0.0.0.0\"\n"
          "    guestPortRange: [1, 65535]\n"
          "    proto: any\n"
          "    ignore: true\n"
          "# No public key from ~/.ssh is copied into the VM: only Lima's own key opens it.\n"
          "ssh:\n"
          "  loadDotSSHPubKeys: false\n"
          "  forwardAgent: false\n");
}

TEST_CASE("The Docker config is anonymous: no credentials, no credential store or helper")
{
    CHECK(anonymous_docker_config() == "{\n  \"auths\": {}\n}\n");
}

TEST_CASE("colima's version is read from its first line and must be 0.10.0 or newer")
{
    CHECK(parse_colima_version("colima version 0.10.1\ngit commit: 1a2b3c\n") == std::optional<std::string>("0.10.1"));
    CHECK(parse_colima_version("colima version v0.9.1\n") == std::optional<std::string>("0.9.1"));
    CHECK_FALSE(parse_colima_version("colima version HEAD-1a2b3c\n").has_value());
    CHECK_FALSE(parse_colima_version("lima version 1.0.0\n").has_value());
    CHECK_FALSE(parse_colima_version("colima version 0.10\n").has_value());
    CHECK(colima_version_supported("0.10.0"));
    CHECK(colima_version_supported("0.10.1"));
    CHECK(colima_version_supported("1.0.0"));
    CHECK_FALSE(colima_version_supported("0.9.1"));
    CHECK_FALSE(colima_version_supported("0.10"));
}
