// `pybox vm start|stop|status`: the private engine, through the daemon.
#include "client/commands.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_start_stop_timeout{60};
// A pool's start copies the images to each engine (the data image is about 1.2 GB).
constexpr std::chrono::seconds k_pool_start_timeout{20 * 60};
constexpr std::chrono::seconds k_status_timeout{10};

std::string problem_lines(const proto::EngineStatus& status)
{
    std::string lines;
    for (const auto& problem : status.problems) lines += "  " + problem.check + ": " + problem.message + "\n";
    return lines;
}

std::string yes_no(bool value) { return value ? "yes" : "no"; }

// The pool's engines, one line each (and their problems and notes below); empty without a pool.
std::string engine_lines(const proto::EngineStatus& status)
{
    if (status.engines.empty()) return {};
    std::string text = "engines:\n";
    for (const auto& engine : status.engines) {
        text += "  " + engine.id + "  " + (engine.verified ? "verified" : "NOT verified") +
                (engine.takes_runs ? "" : " (takes no runs)") + "  busy " + std::to_string(engine.busy) + "  " +
                engine.address + "\n";
        for (const auto& problem : engine.problems) text += "    " + problem.check + ": " + problem.message + "\n";
        for (const auto& note : engine.notes) text += "    note: " + note + "\n";
    }
    return text;
}

// Every engine of the pool that takes runs is verified (true without a pool).
bool pool_verified(const proto::EngineStatus& status)
{
    for (const auto& engine : status.engines)
        if (engine.takes_runs && !engine.verified) return false;
    return true;
}

}  // namespace

Rendered render_vm_start(const proto::EngineStartAnswer& answer)
{
    if (answer.verified && !answer.engines.empty())
        return {(pool_verified(answer) ? "Running and verified.\n" : "Running; not every engine is verified:\n") +
                    engine_lines(answer),
                pool_verified(answer) ? 0 : k_exit_pybox_failed};
    if (answer.verified) return {"Running and verified.\n", 0};
    if (answer.running) return {"Engine running but not verified:\n" + problem_lines(answer), k_exit_pybox_failed};
    return {"Engine started but failed checks; stopped again:\n" + problem_lines(answer), k_exit_pybox_failed};
}

Rendered render_vm_stop(const proto::EngineStopAnswer&) { return {"Stopped.\n", 0}; }

Rendered render_vm_status(const proto::EngineStatus& answer)
{
    std::string text = "running:  " + yes_no(answer.running) + "\n" + "verified: " + yes_no(answer.verified) + "\n" +
                       "socket:   " + answer.engine_socket + "\n";
    for (const auto& note : answer.notes) text += "note:     " + note + "\n";
    if (const auto problems = problem_lines(answer); !problems.empty()) text += "problems:\n" + problems;
    text += engine_lines(answer);
    return {text, answer.verified && pool_verified(answer) ? 0 : k_exit_not_verified};
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
        if (start->parsed())
            return call_and_print("POST", "/v1/vm/start", "", k_pool_start_timeout, *json,
                                  &proto::engine_start_from_json, &render_vm_start);
        if (stop->parsed())
            return call_and_print("POST", "/v1/vm/stop", "", k_start_stop_timeout, *json,
                                  &proto::engine_stop_from_json, &render_vm_stop);
        return call_and_print("GET", "/v1/vm/status", "", k_status_timeout, *json, &proto::engine_status_from_json,
                              &render_vm_status);
    };
}

}  // namespace pybox::client
