#include "daemon/vm/engine_checks.hpp"

#include <algorithm>
#include <charconv>

namespace pybox::vm {

namespace {

std::string shown(std::string_view value)
{
    return value.empty() ? "nothing" : "\"" + std::string(value) + "\"";
}

std::optional<int> parse_number(std::string_view text)
{
    int number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || number < 0) return std::nullopt;
    return number;
}

// The values of -H/--host in a dockerd command line, in every spelling pflag accepts.
std::vector<std::string> host_flags(const std::vector<std::string>& argv)
{
    std::vector<std::string> hosts;
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-H" || arg == "--host") {
            hosts.push_back(i + 1 < argv.size() ? argv[i + 1] : std::string());
            ++i;
        } else if (arg.starts_with("--host=")) {
            hosts.emplace_back(arg.substr(7));
        } else if (arg.starts_with("-H")) {
            auto value = arg.substr(2);
            if (value.starts_with('=')) value.remove_prefix(1);
            hosts.emplace_back(value);
        }
    }
    return hosts;
}

std::vector<std::string> config_file_flags(const std::vector<std::string>& argv)
{
    std::vector<std::string> files;
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--config-file") {
            files.push_back(i + 1 < argv.size() ? argv[i + 1] : std::string());
            ++i;
        } else if (arg.starts_with("--config-file=")) {
            files.emplace_back(arg.substr(14));
        }
    }
    return files;
}

}  // namespace

std::optional<std::pair<int, int>> parse_api_version(std::string_view version)
{
    const auto dot = version.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const auto major = parse_number(version.substr(0, dot));
    const auto minor = parse_number(version.substr(dot + 1));
    if (!major || !minor) return std::nullopt;
    return std::pair{*major, *minor};
}

std::optional<CheckProblem> check_api_version(std::string_view advertised)
{
    const auto version = parse_api_version(advertised);
    const auto minimum = parse_api_version(k_min_api_version);
    if (!version)
        return CheckProblem{"ping", "The engine advertised API version " + shown(advertised) +
                                        ", which is not a version number."};
    if (*version < *minimum)
        return CheckProblem{"ping", "The engine speaks API " + std::string(advertised) + "; PyBox needs " +
                                        std::string(k_min_api_version) + " or newer (Docker 19.03+)."};
    return std::nullopt;
}

std::vector<CheckProblem> check_info(const engine::EngineInfo& info, const EngineExpectations& expected)
{
    if (!info.raw.is_object()) return {CheckProblem{"info", "GET /info did not return a JSON object."}};

    std::vector<CheckProblem> problems;
    if (info.os_type != "linux")
        problems.push_back({"info.os_type", "The engine runs " + shown(info.os_type) + " containers; PyBox needs linux."});

    if (expected.private_engine &&
        std::filesystem::path(info.data_root).lexically_normal() != expected.data_root.lexically_normal())
        problems.push_back({"info.data_root", "The engine's data-root is " + shown(info.data_root) + ", not PyBox's " +
                                                  expected.data_root.string() +
                                                  ": another engine answers on PyBox's socket."});

    if (!info.seccomp)
        problems.push_back({"info.seccomp", "The engine does not offer seccomp, which every box requires."});

    const auto& driver = info.cgroup_driver;
    const auto& version = info.cgroup_version;
    if (driver != "cgroupfs" && driver != "systemd")
        problems.push_back({"info.cgroup", "The engine's cgroup driver is " + shown(driver) +
                                               "; PyBox knows cgroupfs and systemd."});
    else if (version != "1" && version != "2")
        problems.push_back({"info.cgroup", "The engine's cgroup version is " + shown(version) +
                                               "; PyBox knows 1 and 2."});

    if (std::find(info.runtimes.begin(), info.runtimes.end(), expected.runtime) == info.runtimes.end())
        problems.push_back({"info.runtime", "The engine has no runtime named \"" + expected.runtime +
                                                "\" (set \"runtime\" in config.json to one it has)."});
    return problems;
}

std::optional<CheckProblem> check_listeners(const std::vector<std::string>& argv,
                                            const std::filesystem::path& socket,
                                            const std::filesystem::path& config_file)
{
    const auto expected_host = "unix://" + socket.string();
    const auto hosts = host_flags(argv);
    if (hosts.empty())
        return CheckProblem{"listeners", "The engine's command line names no -H host, so its listeners are "
                                         "not the ones PyBox chose."};
    for (const auto& host : hosts)
        if (host != expected_host)
            return CheckProblem{"listeners", "The engine listens on " + shown(host) + " besides " + expected_host +
                                                 "; PyBox allows only its own unix socket."};
    const auto files = config_file_flags(argv);
    if (files.size() != 1 || std::filesystem::path(files.front()) != config_file)
        return CheckProblem{"listeners", "The engine does not read PyBox's config file " + config_file.string() +
                                             ", so a config file could add TCP hosts."};
    return std::nullopt;
}

}  // namespace pybox::vm
