// `pybox doctor [--json]`: everything a run depends on, one check a line with its verdict and,
// for a problem, the fix (docs/doctor.md). The client checks the daemon itself (GET /v1/ping:
// reachable, same version); GET /v1/doctor answers the rest. The report goes to stdout whatever
// the verdicts; the exit code sums them up (commands.hpp).
#include "client/commands.hpp"
#include "common/version.hpp"
#include "proto/api.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

namespace json = boost::json;

// The daemon's checks wait on the engine: its status (a pool's engines too), one inspect per image.
constexpr std::chrono::seconds k_doctor_timeout{60};

std::string verdict_label(std::string_view verdict)
{
    if (verdict == proto::k_verdict_ok) return "ok       ";
    if (verdict == proto::k_verdict_problem) return "PROBLEM  ";
    return "unknown  ";
}

}  // namespace

proto::DoctorCheck check_daemon(const Expected<proto::PingAnswer>& ping, std::string_view client_version,
                                std::string_view client_api)
{
    const std::string name(proto::k_doctor_daemon);
    if (!ping) {
        static constexpr std::string_view k_start = "Start it with: ";
        const auto& message = ping.error().message;
        const auto at = message.find(k_start);
        if (ping.error().code == "daemon_not_running" && at != std::string::npos)
            return {name, std::string(proto::k_verdict_problem), message.substr(0, at - 1),
                    message.substr(at + k_start.size())};
        return {name, std::string(proto::k_verdict_problem), "pyboxd does not answer: " + message,
                "restart pyboxd (stop it with SIGTERM, then start it: pyboxd &)"};
    }
    const std::string seen = "pyboxd " + ping->version + " (API " + ping->api + ")";
    if (ping->version != client_version || ping->api != client_api)
        return {name, std::string(proto::k_verdict_problem),
                seen + ", but this pybox is " + std::string(client_version) + " (API " + std::string(client_api) + ")",
                "restart pyboxd from the same installation as this pybox"};
    return {name, std::string(proto::k_verdict_ok), seen + ", the same as this pybox", ""};
}

std::vector<proto::DoctorCheck> doctor_checks(const proto::DoctorCheck& daemon,
                                              const Expected<proto::DoctorAnswer>& answer)
{
    std::vector<proto::DoctorCheck> checks{daemon};
    if (answer) {
        checks.insert(checks.end(), answer->checks.begin(), answer->checks.end());
        return checks;
    }
    for (const auto name : proto::k_doctor_daemon_checks)
        checks.push_back({std::string(name), std::string(proto::k_verdict_unknown),
                          "not checked: " + answer.error().message, ""});
    return checks;
}

int doctor_exit_code(const std::vector<proto::DoctorCheck>& checks)
{
    bool unknown = false;
    for (const auto& check : checks) {
        if (check.verdict == proto::k_verdict_problem) return k_exit_doctor_problem;
        if (check.verdict != proto::k_verdict_ok) unknown = true;
    }
    return unknown ? k_exit_doctor_unknown : 0;
}

Rendered render_doctor(const std::vector<proto::DoctorCheck>& checks)
{
    std::string text;
    std::size_t problems = 0, unknown = 0;
    for (const auto& check : checks) {
        text += verdict_label(check.verdict) + check.name + ": " + check.detail + "\n";
        if (check.verdict == proto::k_verdict_problem) {
            ++problems;
            text += "         fix: " + check.fix + "\n";
        } else if (check.verdict != proto::k_verdict_ok) {
            ++unknown;
        }
    }
    const int code = doctor_exit_code(checks);
    if (code == 0) text += "All " + std::to_string(checks.size()) + " checks pass.\n";
    else
        text += std::to_string(problems) + " problem(s), " + std::to_string(unknown) + " check(s) unknown, of " +
                std::to_string(checks.size()) + ".\n";
    return {text, code};
}

std::string render_doctor_json(const std::vector<proto::DoctorCheck>& checks)
{
    json::array items;
    for (const auto& check : checks)
        items.push_back(json::object{
            {"name", check.name}, {"verdict", check.verdict}, {"detail", check.detail}, {"fix", check.fix}});
    const int code = doctor_exit_code(checks);
    return util::to_json_text(json::object{{"ok", code == 0}, {"exit_code", code}, {"checks", std::move(items)}}) +
           "\n";
}

Action configure_doctor(CLI::App& command)
{
    auto json_output = std::make_shared<bool>(false);
    command.add_flag("--json", *json_output, "Print one JSON object (docs/doctor.md) instead of the report");
    return [json_output] {
        auto connection = DaemonConnection::from_environment();
        if (!connection) return fail(connection.error());
        const auto ping =
            read_answer(connection->call("GET", "/v1/ping", "", k_ping_timeout), &proto::ping_answer_from_json);
        const Expected<proto::DoctorAnswer> answer =
            ping ? read_answer(connection->call("GET", "/v1/doctor", "", k_doctor_timeout),
                               &proto::doctor_answer_from_json)
                 : Expected<proto::DoctorAnswer>(make_error(ping.error().code, "pyboxd does not answer"));
        const auto checks = doctor_checks(check_daemon(ping, pybox::version(), proto::k_api_version), answer);
        if (*json_output) {
            write_bytes(stdout, render_doctor_json(checks));
            return doctor_exit_code(checks);
        }
        const auto rendered = render_doctor(checks);
        write_bytes(stdout, rendered.text);
        return rendered.exit_code;
    };
}

}  // namespace pybox::client
