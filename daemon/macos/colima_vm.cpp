#include "daemon/macos/colima_vm.hpp"

#include "common/api_error_codes.hpp"
#include "common/file_facts.hpp"
#include "common/files.hpp"
#include "common/process.hpp"
#include "daemon/macos/colima_ssh_config.hpp"
#include "daemon/macos/trusted_tools.hpp"
#include "util/text.hpp"

namespace pybox::macos {

namespace {

using namespace std::chrono_literals;

constexpr auto k_start_timeout = std::chrono::milliseconds(10min);
constexpr auto k_stop_timeout = std::chrono::milliseconds(2min);
constexpr auto k_call_timeout = std::chrono::milliseconds(30s);
constexpr std::size_t k_max_colima_output = 1 << 20;

}  // namespace

Expected<ColimaTools> locate_colima_tools()
{
    const FactsLookup lookup = [](const std::filesystem::path& path) { return file_facts(path); };
    auto colima = locate_tool("colima", current_uid(), lookup);
    if (!colima) return colima.error();
    auto docker = locate_tool("docker", current_uid(), lookup);
    if (!docker) return docker.error();
    return ColimaTools{*colima, *docker};
}

ColimaVm::ColimaVm(const RuntimePaths& paths, ColimaTools tools) : m_layout(paths), m_tools(std::move(tools)) {}

Expected<std::string> ColimaVm::run_colima(const std::vector<std::string>& argv, std::chrono::milliseconds timeout)
{
    ProcessOptions options;
    options.timeout = timeout;
    options.max_output = k_max_colima_output;
    options.separate_stderr = true;
    options.env = colima_environment(m_layout, m_tools.colima);
    auto result = run_process(argv, options);
    if (!result) return result.error();
    if (result->timed_out || result->signal != 0 || result->exit_code != 0) {
        const auto& said = result->error_output.empty() ? result->output : result->error_output;
        const auto tail = said.size() > 300 ? said.substr(said.size() - 300) : said;
        return make_error(api_error::k_colima_failed, "`colima " + argv.at(1) + "` " +
                                               (result->timed_out ? "timed out" : "failed") + ": " +
                                               util::printable_excerpt(tail, 300));
    }
    return std::move(result->output);
}

Expected<ColimaFacts> ColimaVm::gather_facts()
{
    ColimaFacts facts;
    auto status_text = run_colima(colima_status_argv(m_tools.colima), k_call_timeout);
    if (!status_text) return status_text.error();
    auto status = parse_colima_status(*status_text);
    if (!status) return status.error();
    facts.status = std::move(*status);

    auto mounts_text = run_colima(colima_ssh_argv(m_tools.colima, guest_mounts_command()), k_call_timeout);
    if (!mounts_text) return mounts_text.error();
    auto mounts = parse_guest_mounts(*mounts_text);
    if (!mounts) return mounts.error();
    facts.mounts = std::move(*mounts);

    auto log = read_file_capped(m_layout.hostagent_log, k_max_hostagent_log_bytes);
    if (!log) return log.error();
    auto forwards = parse_hostagent_log(*log);
    if (!forwards) return forwards.error();
    facts.forwards = std::move(*forwards);

    auto override_text = read_file_capped(m_layout.override_file, 64 * 1024);
    if (!override_text) return override_text.error();
    facts.override_on_disk = std::move(*override_text);
    return facts;
}

Expected<std::string> ColimaVm::pinned_host_key()
{
    auto pin = read_file_capped(m_layout.host_key_pin, 1024);
    if (pin) return parse_host_key_pin(*pin);
    if (pin.error().code != api_error::k_file_missing) return pin.error();
    // The first start: pin what the VM presents now (trust on first use; see colima_ssh_config.hpp).
    auto key_line = run_colima(colima_ssh_argv(m_tools.colima, guest_host_key_command()), k_call_timeout);
    if (!key_line) return key_line.error();
    auto fingerprint = host_key_fingerprint(*key_line);
    if (!fingerprint) return fingerprint.error();
    if (auto written = write_file_atomic(m_layout.host_key_pin, host_key_pin_text(*fingerprint)); !written)
        return written.error();
    return fingerprint;
}

Expected<ColimaStarted> ColimaVm::start()
{
    for (const auto& dir : {m_layout.colima_home, m_layout.override_file.parent_path(), m_layout.docker_config_dir})
        if (auto made = ensure_private_dir(dir); !made) return made.error();
    if (auto written = write_file_atomic(m_layout.override_file, override_yaml()); !written) return written.error();
    if (auto written = write_file_atomic(m_layout.docker_config_file, anonymous_docker_config()); !written)
        return written.error();

    auto version_text = run_colima(colima_version_argv(m_tools.colima), k_call_timeout);
    if (!version_text) return version_text.error();
    const auto version = parse_colima_version(*version_text);
    if (!version || !colima_version_supported(*version))
        return make_error(api_error::k_colima_too_old, "PyBox needs colima " + std::string(k_min_colima_version) +
                                                " or newer; " + m_tools.colima.string() + " is " +
                                                (version ? *version : std::string("of an unknown version")) +
                                                " (brew upgrade colima).");

    if (auto started = run_colima(colima_start_argv(m_tools.colima), k_start_timeout); !started) {
        // A start that failed half-way may have left the VM up: stop it, keep the start's error.
        (void)stop();
        return started.error();
    }

    auto facts = gather_facts();
    std::string reason;
    if (!facts) {
        reason = facts.error().message;
    } else if (const auto verdict = check_colima(*facts, m_layout); !verdict.ok()) {
        reason = verdict.reason();
    }
    if (!reason.empty()) {
        const auto stopped = stop();
        return make_error(api_error::k_engine_check_failed, "The colima VM was stopped again: " + reason +
                                                 (stopped ? "" : " (and stopping it failed: " + stopped.error().message + ")"));
    }

    auto fingerprint = pinned_host_key();
    if (!fingerprint) return fingerprint.error();
    auto target = ssh_target(*fingerprint);
    if (!target) return target.error();
    return ColimaStarted{m_layout.docker_socket, std::move(*target)};
}

Expected<engine::SshEngine> ColimaVm::ssh_target(const std::optional<std::string>& fingerprint)
{
    auto config_text = run_colima(colima_ssh_config_argv(m_tools.colima), k_call_timeout);
    if (!config_text) return config_text.error();
    auto config = parse_colima_ssh_config(*config_text, m_layout);
    if (!config) return config.error();
    return colima_ssh_engine(*config, fingerprint);
}

Expected<engine::SshEngine> ColimaVm::watcher_target()
{
    auto pin = read_file_capped(m_layout.host_key_pin, 1024);
    if (!pin && pin.error().code != api_error::k_file_missing) return pin.error();
    std::optional<std::string> fingerprint;
    if (pin) {
        auto parsed = parse_host_key_pin(*pin);
        if (!parsed) return parsed.error();
        fingerprint = std::move(*parsed);
    }
    return ssh_target(fingerprint);
}

Expected<void> ColimaVm::stop()
{
    auto stopped = run_colima(colima_stop_argv(m_tools.colima), k_stop_timeout);
    if (!stopped) return stopped.error();
    return {};
}

}  // namespace pybox::macos
