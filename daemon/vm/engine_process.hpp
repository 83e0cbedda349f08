// What the private engine's processes look like on disk: the dockerd command line PyBox runs,
// the pid files and sockets dockerd and its managed containerd leave under the engine folder,
// and how to recognise our own processes from /proc/<pid>/cmdline (never by name alone, so
// another user's or another installation's engine is never touched).
//
// Measured with Debian's dockerd 20.10: dockerd starts containerd with a parent-death signal,
// so a SIGKILLed dockerd takes its containerd along, but leaves dockerd.pid, docker.sock, the
// containerd pid file and sockets, and its bind mount of the data-root over itself behind.
// dockerd recovers from those by itself; PyBox still removes them (and the mount) so a
// restarted engine owns clean state and a clean stop leaves nothing mounted.
//
// The engine's socket, pid file, log and config file live in <runtime>/engine/, but its
// data-root and exec-root live in /var/lib/pybox/<engine key>/: a box can read the data-root's
// path (its overlay lowerdir/upperdir/workdir and the sources of /etc/hostname, /etc/hosts and
// /etc/resolv.conf in /proc/self/mountinfo), and there it names neither the user's home nor
// the user (docs/how-it-works.md lists what a box still sees).
#pragma once

#include "common/paths.hpp"
#include "daemon/config/daemon_config.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::vm {

inline constexpr std::string_view k_engine_state_base = "/var/lib/pybox";

// 16 hex digits of SHA-256 over the installation id and the runtime folder: one engine per
// runtime folder, and without the random installation id nothing about the user can be
// learned from it.
std::string engine_key(const RuntimePaths& paths, std::string_view installation_id);

struct EngineLayout {
    EngineLayout(const RuntimePaths& paths, std::string_view installation_id);

    std::filesystem::path state_dir;  // k_engine_state_base/<engine key>, holds data-root and exec-root
    std::filesystem::path socket;
    std::filesystem::path data_root;
    std::filesystem::path exec_root;
    std::filesystem::path pid_file;
    std::filesystem::path log_file;
    std::filesystem::path config_file;  // the empty daemon.json given to --config-file
    std::filesystem::path containerd_pid_file;
    std::filesystem::path containerd_config;
    std::vector<std::filesystem::path> stale_sockets;  // docker.sock and containerd's sockets
};

// The full argv of the private engine (argv[0] is config.dockerd).
std::vector<std::string> dockerd_arguments(const config::DaemonConfig& config, const EngineLayout& layout);

// True when argv is a dockerd started with --data-root <data_root>.
bool is_dockerd_of(const std::vector<std::string>& argv, const std::filesystem::path& data_root);
// True when argv is the containerd dockerd manages under <exec_root>.
bool is_containerd_of(const std::vector<std::string>& argv, const std::filesystem::path& containerd_config);

// Splits a /proc/<pid>/cmdline image into arguments.
std::vector<std::string> split_cmdline(std::string_view raw);
// True when `dir` is a mount point according to a /proc/self/mountinfo image.
bool is_mount_point(std::string_view mountinfo, const std::filesystem::path& dir);

// Reads a pid file: nullopt when missing or not a positive number.
std::optional<int> read_pid_file(const std::filesystem::path& file);
// /proc/<pid>/cmdline split; nullopt when the process is gone or a zombie.
std::optional<std::vector<std::string>> process_cmdline(int pid);
// Whether `dir` is a mount point now.
bool is_mounted(const std::filesystem::path& dir);

}  // namespace pybox::vm
