// `pybox vm start|stop|status`: the private engine, through the daemon.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"
#include "proto/json_text.hpp"

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_start_stop_timeout{60};
constexpr std::chrono::seconds k_status_timeout{10};

std::string problem_lines(const boost::json::value& answer)
{
    std::string lines;
    if (const auto* problems = json_list(answer, "problems"))
        for (const auto& problem : *problems)
            lines += "  " + json_text(problem, "check") + ": " + json_text(problem, "message") + "\n";
    return lines;
}

std::string yes_no(bool value) { return value ? "yes" : "no"; }

int call_and_print(std::string_view method, std::string_view target, std::chrono::milliseconds timeout, bool json,
                   Rendered (*render)(const boost::json::value&))
{
    auto connection = DaemonConnection::from_environment();
    if (!connection) return fail(connection.error());
    auto answer = connection->call(method, target, "", timeout);
    if (!answer) return fail(answer.error());
    const auto rendered = render(*answer);
    if (json) {
        write_bytes(stdout, proto::to_json_text(*answer) + "\n");
        return rendered.exit_code;
    }
    return print(rendered);
}

Rendered render_vm_stop(const boost::json::value&) { return {"Stopped.\n", 0}; }

}  // namespace

Rendered render_vm_start(const boost::json::value& answer)
{
    if (json_flag(answer, "verified")) return {"Running and verified.\n", 0};
    if (json_flag(answer, "running"))
        return {"Engine running but not verified:\n" + problem_lines(answer), k_exit_pybox_failed};
    return {"Engine started but failed checks; stopped again:\n" + problem_lines(answer), k_exit_pybox_failed};
}

Rendered render_vm_status(const boost::json::value& answer)
{
    std::string text = "running:  " + yes_no(json_flag(answer, "running")) + "\n" +
                       "verified: " + yes_no(json_flag(answer, "verified")) + "\n" +
                       "socket:   " + json_text(answer, "engine_socket") + "\n";
    if (const auto* notes = json_list(answer, "notes"))
        for (const auto& note : *notes)
            text += "note:     " + (note.is_string() ? std::string(note.get_string()) : proto::to_json_text(note)) + "\n";
    if (const auto problems = problem_lines(answer); !problems.empty()) text += "problems:\n" + problems;
    return {text, json_flag(answer, "verified") ? 0 : k_exit_not_verified};
}

Action configure_vm(CLI::App& command)
{
    auto json = std::make_shared<bool>(false);
    command.require_subcommand(1);
    auto* start = command.add_subcommand("start", "Start the private engine and verify its settings");
    auto* stop = command.add_subcommand("stop", "Stop the private engine");
    auto* status = command.add_subcommand("status", "Show whether the engine runs and was verified");
    for (auto* sub : {start, stop, status}) sub->add_flag("--json", *json, "Print the daemon's JSON answer");
    return [json, start, stop] {
        if (start->parsed()) return call_and_print("POST", "/v1/vm/start", k_start_stop_timeout, *json, render_vm_start);
        if (stop->parsed()) return call_and_print("POST", "/v1/vm/stop", k_start_stop_timeout, *json, render_vm_stop);
        return call_and_print("GET", "/v1/vm/status", k_status_timeout, *json, render_vm_status);
    };
}

}  // namespace pybox::client
