#include "daemon/vm/engine_process.hpp"

#include "common/files.hpp"
#include "common/sha256.hpp"

#include <charconv>

namespace pybox::vm {

namespace {

constexpr std::size_t k_max_cmdline_bytes = 64 * 1024;
constexpr std::size_t k_max_mountinfo_bytes = 4 * 1024 * 1024;
constexpr std::size_t k_engine_key_digits = 16;

// The value of `--name value` or `--name=value`, if present.
std::optional<std::string_view> flag_value(const std::vector<std::string>& argv, std::string_view name)
{
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string_view arg = argv[i];
        if (arg == name && i + 1 < argv.size()) return std::string_view(argv[i + 1]);
        if (arg.size() > name.size() && arg.starts_with(name) && arg[name.size()] == '=')
            return arg.substr(name.size() + 1);
    }
    return std::nullopt;
}

bool program_is(const std::vector<std::string>& argv, std::string_view name)
{
    return !argv.empty() && std::filesystem::path(argv.front()).filename() == name;
}

// Undoes mountinfo's octal escapes (\040 for a space and so on).
std::string unescape_mount_field(std::string_view field)
{
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            int code = 0;
            const auto [end, ec] = std::from_chars(field.data() + i + 1, field.data() + i + 4, code, 8);
            if (ec == std::errc{} && end == field.data() + i + 4) {
                out.push_back(static_cast<char>(code));
                i += 3;
                continue;
            }
        }
        out.push_back(field[i]);
    }
    return out;
}

}  // namespace

std::string engine_key(const RuntimePaths& paths, std::string_view installation_id)
{
    std::string material(installation_id);
    material += '\0';
    material += paths.root().string();
    return sha256_hex(material).substr(0, k_engine_key_digits);
}

EngineLayout::EngineLayout(const RuntimePaths& paths, std::string_view installation_id)
    : state_dir(std::filesystem::path(k_engine_state_base) / engine_key(paths, installation_id)),
      socket(config::private_engine_socket(paths)),
      data_root(state_dir / "data"),
      exec_root(state_dir / "exec"),
      pid_file(paths.engine_dir() / "dockerd.pid"),
      log_file(paths.engine_dir() / "dockerd.log"),
      config_file(paths.engine_dir() / "daemon.json"),
      containerd_pid_file(exec_root / "containerd" / "containerd.pid"),
      containerd_config(exec_root / "containerd" / "containerd.toml"),
      stale_sockets{socket, exec_root / "containerd" / "containerd.sock",
                    exec_root / "containerd" / "containerd.sock.ttrpc",
                    exec_root / "containerd" / "containerd-debug.sock"}
{
}

std::vector<std::string> dockerd_arguments(const config::DaemonConfig& config, const EngineLayout& layout)
{
    return {config.dockerd.string(),
            "--config-file", layout.config_file.string(),
            "--data-root", layout.data_root.string(),
            "--exec-root", layout.exec_root.string(),
            "-H", "unix://" + layout.socket.string(),
            "--pidfile", layout.pid_file.string(),
            "--group", "root",
            "--bridge", "none",
            "--iptables=false",
            "--ip6tables=false",
            "--ip-forward=false",
            "--ip-masq=false",
            "--userland-proxy=false",
            "--log-driver", "none",
            "--default-runtime", config.runtime,
            "--containerd-namespace", "pybox",
            "--containerd-plugins-namespace", "pybox-plugins"};
}

bool is_dockerd_of(const std::vector<std::string>& argv, const std::filesystem::path& data_root)
{
    const auto root = flag_value(argv, "--data-root");
    return program_is(argv, "dockerd") && root && std::filesystem::path(*root) == data_root;
}

bool is_containerd_of(const std::vector<std::string>& argv, const std::filesystem::path& containerd_config)
{
    const auto config = flag_value(argv, "--config");
    return program_is(argv, "containerd") && config && std::filesystem::path(*config) == containerd_config;
}

std::vector<std::string> split_cmdline(std::string_view raw)
{
    std::vector<std::string> argv;
    while (!raw.empty()) {
        const auto end = raw.find('\0');
        argv.emplace_back(raw.substr(0, end));
        if (end == std::string_view::npos) break;
        raw.remove_prefix(end + 1);
    }
    return argv;
}

bool is_mount_point(std::string_view mountinfo, const std::filesystem::path& dir)
{
    // Fields: mount-id parent-id major:minor root mount-point options ...
    while (!mountinfo.empty()) {
        const auto line_end = mountinfo.find('\n');
        std::string_view line = mountinfo.substr(0, line_end);
        mountinfo.remove_prefix(line_end == std::string_view::npos ? mountinfo.size() : line_end + 1);
        for (int field = 0; field < 4 && !line.empty(); ++field) {
            const auto space = line.find(' ');
            line.remove_prefix(space == std::string_view::npos ? line.size() : space + 1);
        }
        const auto point = line.substr(0, line.find(' '));
        if (!point.empty() && std::filesystem::path(unescape_mount_field(point)) == dir) return true;
    }
    return false;
}

std::optional<int> read_pid_file(const std::filesystem::path& file)
{
    const auto text = read_file_capped(file, 64);
    if (!text) return std::nullopt;
    std::string_view digits = *text;
    while (!digits.empty() && (digits.back() == '\n' || digits.back() == ' ')) digits.remove_suffix(1);
    int pid = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (ec != std::errc{} || end != digits.data() + digits.size() || pid <= 0) return std::nullopt;
    return pid;
}

std::optional<std::vector<std::string>> process_cmdline(int pid)
{
    const auto raw = read_file_capped("/proc/" + std::to_string(pid) + "/cmdline", k_max_cmdline_bytes);
    if (!raw || raw->empty()) return std::nullopt;
    return split_cmdline(*raw);
}

bool is_mounted(const std::filesystem::path& dir)
{
    const auto mountinfo = read_file_capped("/proc/self/mountinfo", k_max_mountinfo_bytes);
    return mountinfo && is_mount_point(*mountinfo, dir);
}

}  // namespace pybox::vm
