// `pybox attempts`: the runs whose end pyboxd did not confirm (it was killed, or lost the
// engine, mid-run), from GET /v1/attempts: those its sweep settled, from the attempt journal,
// and those not settled yet.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"
#include "proto/json_text.hpp"

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_attempts_timeout{10};

int run_attempts(bool json)
{
    auto connection = DaemonConnection::from_environment();
    if (!connection) return fail(connection.error());
    auto answer = connection->call("GET", "/v1/attempts", "", k_attempts_timeout);
    if (!answer) return fail(answer.error());
    if (json) {
        write_bytes(stdout, proto::to_json_text(*answer) + "\n");
        return 0;
    }
    return print(render_attempts(*answer));
}

std::string settled_line(const boost::json::value& entry)
{
    std::string box = json_text(entry, "box");
    if (const auto removed_at = json_text(entry, "box_removed_at"); !removed_at.empty()) box += " at " + removed_at;
    std::string line = json_text(entry, "run_id") + "  started " + json_text(entry, "created_at") + "  settled " +
                       json_text(entry, "settled_at") + "  box " + box + "\n";
    if (const auto* errors = json_list(entry, "errors"))
        for (const auto& error : *errors)
            if (error.is_string()) line += "    before it settled: " + std::string(error.get_string()) + "\n";
    return line;
}

std::string unsettled_line(const boost::json::value& note)
{
    const std::string run_id = json_text(note, "run_id");
    if (!json_flag(note, "readable")) return run_id + "  (its note is damaged; the sweep leaves it)\n";
    return run_id + "  started " + json_text(note, "created_at") +
           (json_flag(note, "in_progress") ? "  running now\n" : "  waiting for the sweep\n");
}

}  // namespace

Rendered render_attempts(const boost::json::value& answer)
{
    const auto* settled = json_list(answer, "settled");
    const auto* unsettled = json_list(answer, "unsettled");
    std::string text;
    if (unsettled != nullptr && !unsettled->empty()) {
        text += "Not settled yet (newest first):\n";
        for (const auto& note : *unsettled) text += "  " + unsettled_line(note);
    }
    if (settled != nullptr && !settled->empty()) {
        text += "Settled by the sweep: runs whose end pyboxd did not confirm; each may have run (newest first):\n";
        for (const auto& entry : *settled) text += "  " + settled_line(entry);
    }
    if (text.empty()) text = "No lost runs: the journal is empty and every run's end was confirmed.\n";
    if (const auto damaged = json_text(answer, "damaged_lines"); !damaged.empty() && damaged != "0")
        text += "(" + damaged + " damaged journal lines were skipped)\n";
    return {text, 0};
}

Action configure_attempts(CLI::App& command)
{
    auto json = std::make_shared<bool>(false);
    command.add_flag("--json", *json, "Print the daemon's JSON answer");
    return [json] { return run_attempts(*json); };
}

}  // namespace pybox::client
