// The private colima profile `pybox` that PyBox runs on macOS: where its files are, the exact
// command lines PyBox gives colima, and the two files PyBox writes before starting it. All pure:
// ColimaVm (colima_vm.hpp) writes the files and runs the commands.
//
// Everything lives under the runtime folder, never in ~/.colima or ~/.lima:
//   <runtime>/colima/                         COLIMA_HOME: the profile `pybox`, its disk, its
//                                             Docker socket <runtime>/colima/pybox/docker.sock
//   <runtime>/colima/_lima/                   LIMA_HOME: the Lima instance colima-pybox
//   <runtime>/colima/_lima/_config/override.yaml  no port of the VM is forwarded to the Mac
//   <runtime>/docker/config.json              DOCKER_CONFIG: anonymous, no credential helper
// colima falls back to ~/.colima when COLIMA_HOME does not exist yet, so the folder must be made
// (0700) before colima is run.
//
// The VM: `colima start` with the profile pybox, Apple's Virtualization.framework (vz), arm64,
// the docker runtime, no mounts (--mount none), no port forwarder, no reachable network address,
// no Kubernetes, no ssh agent, no entry in ~/.ssh/config, no Docker context switch, no template,
// no binfmt emulators. CPU, memory and disk are PyBox's own choices (the seed names none): room
// for one box of the data image (1 core, 512 MiB) and its image.
#pragma once

#include "common/paths.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::macos {

inline constexpr std::string_view k_colima_profile = "pybox";
// The Lima instance colima makes for the profile, and the ssh Host name it prints.
inline constexpr std::string_view k_lima_instance = "colima-pybox";
inline constexpr int k_vm_cpus = 2;
inline constexpr int k_vm_memory_gib = 2;
inline constexpr int k_vm_disk_gib = 20;
inline constexpr std::string_view k_vm_type = "vz";
inline constexpr std::string_view k_vm_arch = "aarch64";
inline constexpr std::string_view k_vm_runtime = "docker";
// The oldest colima whose `start` knows every flag PyBox passes (--mount none came in 0.10.0).
inline constexpr std::string_view k_min_colima_version = "0.10.0";
// The Docker socket inside the VM (the engine the watcher's ssh channel reaches).
inline constexpr std::string_view k_guest_docker_socket = "/var/run/docker.sock";
// colima forwards the VM's containerd socket beside the Docker socket (same folder, same owner).
inline constexpr std::string_view k_guest_containerd_socket = "/var/run/containerd/containerd.sock";

struct ColimaLayout {
    explicit ColimaLayout(const RuntimePaths& paths);

    std::filesystem::path colima_home;    // <runtime>/colima
    std::filesystem::path profile_dir;    // <runtime>/colima/pybox
    std::filesystem::path docker_socket;  // <runtime>/colima/pybox/docker.sock
    std::filesystem::path containerd_socket;  // <runtime>/colima/pybox/containerd.sock
    std::filesystem::path lima_home;      // <runtime>/colima/_lima
    std::filesystem::path override_file;  // <runtime>/colima/_lima/_config/override.yaml
    std::filesystem::path lima_key;       // <runtime>/colima/_lima/_config/user: Lima's ssh key
    std::filesystem::path instance_dir;   // <runtime>/colima/_lima/colima-pybox
    std::filesystem::path hostagent_log;  // <instance_dir>/ha.stderr.log: what Lima forwarded
    std::filesystem::path host_key_pin;   // <runtime>/colima/pybox-host-key: the VM's pinned key
    std::filesystem::path docker_config_dir;   // <runtime>/docker
    std::filesystem::path docker_config_file;  // <runtime>/docker/config.json
};

// The environment colima runs with (on top of what pyboxd has): its and Lima's homes, the
// anonymous Docker config, and a PATH of the folder colima was found in (colima runs limactl
// and docker from there) and the system folders only.
std::map<std::string, std::string> colima_environment(const ColimaLayout& layout,
                                                      const std::filesystem::path& colima);

std::vector<std::string> colima_start_argv(const std::filesystem::path& colima);
std::vector<std::string> colima_stop_argv(const std::filesystem::path& colima);
std::vector<std::string> colima_status_argv(const std::filesystem::path& colima);  // --json
std::vector<std::string> colima_version_argv(const std::filesystem::path& colima);
std::vector<std::string> colima_ssh_config_argv(const std::filesystem::path& colima);
// `colima ssh --profile pybox -- <command...>`: the fallback way into the VM. `command` is one of
// PyBox's fixed commands (below, or the watcher's), never text from a request.
std::vector<std::string> colima_ssh_argv(const std::filesystem::path& colima, const std::vector<std::string>& command);

// The fixed commands PyBox runs in the VM: its mounts (for the shared-folder check) and its ssh
// host key (pinned on the first start).
std::vector<std::string> guest_mounts_command();
std::vector<std::string> guest_host_key_command();

// override.yaml: one Lima rule that ignores every TCP and UDP port the VM listens on (the
// Docker socket is forwarded by its own socket rule, which port rules do not touch), and no
// public key from ~/.ssh copied into the VM.
std::string override_yaml();
// config.json for DOCKER_CONFIG: no stored credentials, no credential store or helpers.
std::string anonymous_docker_config();

// "colima version 0.10.1" (the first line of `colima version`) -> "0.10.1"; nullopt otherwise.
std::optional<std::string> parse_colima_version(std::string_view output);
// Whether `version` ("0.10.1") is at least k_min_colima_version.
bool colima_version_supported(std::string_view version);

}  // namespace pybox::macos
