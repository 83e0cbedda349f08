#include "daemon/macos/colima_profile.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

namespace pybox::macos {

namespace fs = std::filesystem;

ColimaLayout::ColimaLayout(const RuntimePaths& paths)
    : colima_home(paths.root() / "colima"),
      profile_dir(colima_home / std::string(k_colima_profile)),
      docker_socket(profile_dir / "docker.sock"),
      containerd_socket(profile_dir / "containerd.sock"),
      lima_home(colima_home / "_lima"),
      override_file(lima_home / "_config" / "override.yaml"),
      lima_key(lima_home / "_config" / "user"),
      instance_dir(lima_home / std::string(k_lima_instance)),
      hostagent_log(instance_dir / "ha.stderr.log"),
      host_key_pin(colima_home / "pybox-host-key"),
      docker_config_dir(paths.root() / "docker"),
      docker_config_file(docker_config_dir / "config.json")
{
}

std::map<std::string, std::string> colima_environment(const ColimaLayout& layout, const fs::path& colima)
{
    return {
        {"COLIMA_HOME", layout.colima_home.string()},
        {"LIMA_HOME", layout.lima_home.string()},
        {"DOCKER_CONFIG", layout.docker_config_dir.string()},
        {"PATH", colima.parent_path().string() + ":/usr/bin:/bin:/usr/sbin:/sbin"},
    };
}

namespace {

std::vector<std::string> with_profile(const fs::path& colima, std::string_view command)
{
    return {colima.string(), std::string(command), "--profile", std::string(k_colima_profile)};
}

}  // namespace

std::vector<std::string> colima_start_argv(const fs::path& colima)
{
    auto argv = with_profile(colima, "start");
    const std::vector<std::string> flags = {
        "--cpus", std::to_string(k_vm_cpus),
        "--memory", std::to_string(k_vm_memory_gib),
        "--disk", std::to_string(k_vm_disk_gib),
        "--vm-type", std::string(k_vm_type),
        "--arch", std::string(k_vm_arch),
        "--runtime", std::string(k_vm_runtime),
        "--mount", "none",
        "--port-forwarder", "none",
        "--network-address=false",
        "--kubernetes=false",
        "--ssh-agent=false",
        "--ssh-config=false",
        "--activate=false",
        "--template=false",
        "--binfmt=false",
    };
    argv.insert(argv.end(), flags.begin(), flags.end());
    return argv;
}

std::vector<std::string> colima_stop_argv(const fs::path& colima) { return with_profile(colima, "stop"); }

std::vector<std::string> colima_status_argv(const fs::path& colima)
{
    auto argv = with_profile(colima, "status");
    argv.emplace_back("--json");
    return argv;
}

std::vector<std::string> colima_version_argv(const fs::path& colima) { return {colima.string(), "version"}; }

std::vector<std::string> colima_ssh_config_argv(const fs::path& colima) { return with_profile(colima, "ssh-config"); }

std::vector<std::string> colima_ssh_argv(const fs::path& colima, const std::vector<std::string>& command)
{
    auto argv = with_profile(colima, "ssh");
    argv.emplace_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

std::vector<std::string> guest_mounts_command() { return {"cat", "/proc/self/mounts"}; }

std::vector<std::string> guest_host_key_command() { return {"cat", "/etc/ssh/ssh_host_ed25519_key.pub"}; }

std::string override_yaml()
{
    return "# Written by PyBox on every `pybox vm start`; edits are lost.\n"
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
           "  forwardAgent: false\n";
}

std::string anonymous_docker_config() { return "{\n  \"auths\": {}\n}\n"; }

namespace {

std::optional<std::vector<int>> version_numbers(std::string_view version)
{
    std::vector<int> numbers;
    while (true) {
        int value = 0;
        const auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), value);
        if (error != std::errc() || end == version.data() || value < 0) return std::nullopt;
        numbers.push_back(value);
        version.remove_prefix(static_cast<std::size_t>(end - version.data()));
        if (version.empty()) break;
        if (version.front() != '.' || numbers.size() == 3) return std::nullopt;
        version.remove_prefix(1);
    }
    if (numbers.size() != 3) return std::nullopt;
    return numbers;
}

}  // namespace

std::optional<std::string> parse_colima_version(std::string_view output)
{
    const auto line = output.substr(0, output.find('\n'));
    constexpr std::string_view prefix = "colima version ";
    if (!line.starts_with(prefix)) return std::nullopt;
    auto version = line.substr(prefix.size());
    if (version.starts_with('v')) version.remove_prefix(1);
    if (!version_numbers(version)) return std::nullopt;
    return std::string(version);
}

bool colima_version_supported(std::string_view version)
{
    const auto have = version_numbers(version);
    const auto need = version_numbers(k_min_colima_version);
    return have && need && !std::lexicographical_compare(have->begin(), have->end(), need->begin(), need->end());
}

}  // namespace pybox::macos
