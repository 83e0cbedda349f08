// `pybox attempts`: the runs whose end pyboxd did not confirm (it was killed, or lost the
// engine, mid-run), from GET /v1/attempts: those its sweep settled, from the attempt journal,
// and those not settled yet.
#include "client/commands.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_attempts_timeout{10};

std::string settled_line(const proto::SettledAttempt& entry)
{
    std::string box = entry.box;
    if (entry.box_removed_at) box += " at " + *entry.box_removed_at;
    std::string line = entry.run_id + "  started " + entry.created_at + "  settled " + entry.settled_at + "  box " +
                       box + "\n";
    if (entry.receipt) line += "    its receipt: pybox receipts show " + *entry.receipt + "\n";
    for (const auto& error : entry.errors) line += "    before it settled: " + error + "\n";
    return line;
}

std::string unsettled_line(const proto::UnsettledAttempt& note)
{
    if (!note.readable) return note.run_id + "  (its note is damaged; the sweep leaves it)\n";
    return note.run_id + "  started " + note.created_at +
           (note.warm ? "  warm box, waiting for a program\n" : note.in_progress ? "  running now\n" : "  waiting for the sweep\n");
}

}  // namespace

Rendered render_attempts(const proto::AttemptsAnswer& answer)
{
    std::string text;
    if (!answer.unsettled.empty()) {
        text += "Not settled yet (newest first):\n";
        for (const auto& note : answer.unsettled) text += "  " + unsettled_line(note);
    }
    if (!answer.settled.empty()) {
        text += "Settled by the sweep: runs whose end pyboxd did not confirm; each may have run (newest first):\n";
        for (const auto& entry : answer.settled) text += "  " + settled_line(entry);
    }
    if (text.empty()) text = "No lost runs: the journal is empty and every run's end was confirmed.\n";
    if (answer.damaged_lines > 0)
        text += "(" + std::to_string(answer.damaged_lines) + " damaged journal lines were skipped)\n";
    return {text, 0};
}

Action configure_attempts(CLI::App& command)
{
    auto json = std::make_shared<bool>(false);
    command.add_flag("--json", *json, "Print the daemon's JSON answer");
    return [json] {
        return call_and_print("GET", "/v1/attempts", "", k_attempts_timeout, *json, &proto::attempts_answer_from_json,
                              &render_attempts);
    };
}

}  // namespace pybox::client
