#include "client/short_view.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

namespace pybox::client {

namespace json = boost::json;

using proto::CleanupStatus, proto::EnvironmentRecord, proto::FileRecord, proto::Receipt, proto::SignalSource, proto::StreamRecord,
    proto::TerminationMechanism, proto::UnsealedFacts;
using util::format_number, util::is_valid_utf8, util::printable_excerpt;

namespace {

constexpr std::size_t k_label_width = 22;
constexpr std::size_t k_max_shown_bytes = 300;

// Text from the receipt made safe for a terminal: control characters (C0, DEL, C1) become
// '?', and text that is not UTF-8 is shown as escaped bytes.
std::string terminal_safe(std::string_view text)
{
    if (!util::is_valid_utf8(text)) {
        return util::printable_excerpt(text, k_max_shown_bytes);
    }
    std::string out;
    const std::string_view shown = text.substr(0, k_max_shown_bytes);
    for (std::size_t i = 0; i < shown.size(); ++i) {
        const auto byte = static_cast<unsigned char>(shown[i]);
        const bool c1 = byte == 0xC2 && i + 1 < shown.size() &&
                        static_cast<unsigned char>(shown[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(shown[i + 1]) <= 0x9F;
        if (c1) {
            out += '?';
            ++i;
        } else if (byte < 0x20 || byte == 0x7F) {
            out += '?';
        } else {
            out += shown[i];
        }
    }
    if (shown.size() < text.size()) {
        out += "...";
    }
    return out;
}

void add_line(std::string& out, std::string_view label, std::string_view value)
{
    out += "  ";
    out += label;
    out.append(label.size() < k_label_width ? k_label_width - label.size() : 2, ' ');
    out += value;
    out += '\n';
}

std::string seconds_3(double seconds)
{
    std::array<char, 32> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.3f", seconds);
    return buffer.data();
}

// observed.environment's names: what the program's environment held beyond PyBox's (a cluster's
// kubelet adds HOSTNAME and the KUBERNETES_* variables). Values stay in --json.
std::string environment_text(const EnvironmentRecord& environment)
{
    if (environment.beyond_spec.empty()) return "only what PyBox set";
    std::string names;
    std::size_t shown = 0;
    for (const auto& variable : environment.beyond_spec) {
        if (shown == k_environment_names_shown) break;
        names += (shown++ == 0 ? "" : ", ") + terminal_safe(variable.substr(0, variable.find('=')));
    }
    const auto more = environment.beyond_spec.size() - shown;
    if (more > 0) names += " and " + std::to_string(more) + " more";
    return "also " + names + " (not set by PyBox)";
}

std::optional<std::string> unknown_reason(const Receipt& receipt, const std::string& key)
{
    const auto found = receipt.unknown.find(key);
    if (found == receipt.unknown.end()) {
        return std::nullopt;
    }
    return terminal_safe(found->second);
}

// The name a newer daemon wrote where this build knows no such value.
std::string unrecognized_name(const Receipt& receipt, const std::string& path)
{
    const auto found = receipt.unrecognized.find(path);
    return found == receipt.unrecognized.end() ? std::string("?") : "\"" + terminal_safe(found->second) + "\"";
}

std::string signal_name(int signal)
{
    constexpr std::array<std::pair<int, std::string_view>, 12> k_names{{
        {1, "SIGHUP"}, {2, "SIGINT"}, {3, "SIGQUIT"}, {4, "SIGILL"}, {6, "SIGABRT"}, {7, "SIGBUS"},
        {8, "SIGFPE"}, {9, "SIGKILL"}, {11, "SIGSEGV"}, {13, "SIGPIPE"}, {14, "SIGALRM"}, {15, "SIGTERM"},
    }};
    for (const auto& [number, name] : k_names) {
        if (number == signal) {
            return "signal " + std::to_string(signal) + ", " + std::string(name);
        }
    }
    return "signal " + std::to_string(signal);
}

// The kernel counted an OOM kill the engine did not report: an OOM end then rests on that count.
bool engine_denied_oom(const Receipt& receipt)
{
    return std::any_of(receipt.explanations.begin(), receipt.explanations.end(),
                       [](const proto::Explanation& explanation) { return explanation.code == "OOM_KILL_COUNTED_BY_KERNEL"; });
}

std::string exit_code_text(const Receipt& receipt)
{
    const auto& termination = receipt.observed.termination;
    const std::string code = std::to_string(exit_code_for(receipt));
    switch (termination.mechanism) {
    case TerminationMechanism::target_exit_observed: {
        if (termination.signal && termination.signal_source == SignalSource::wait_status) {
            return code + " (ended by " + signal_name(*termination.signal) + "; who sent it is not known)";
        }
        if (!termination.exit_code) {
            return code + " (ended by itself; the engine reported no exit code)";
        }
        std::string text = code + " (ended by itself";
        if (termination.inferred_signal) {
            text += "; " + std::to_string(*termination.exit_code) + " is also what " +
                    signal_name(*termination.inferred_signal) + " gives, but no signal was observed";
        }
        if (termination.deadline_kill_sent) {
            text += "; PyBox's deadline kill did not end it";
        }
        return text + ")";
    }
    case TerminationMechanism::deadline_kill:
        return code + (termination.signal_source == SignalSource::box_timer ? " (stopped by the box timer)"
                                                                             : " (stopped by PyBox at the deadline)");
    case TerminationMechanism::cause_not_established:
        return code + " (cause not established: " +
               unknown_reason(receipt, "exact_termination_cause")
                   .value_or("a kill was sent at the deadline, but whether the program had already "
                             "ended is not certain") +
               ")";
    case TerminationMechanism::stopped_on_disconnect:
        return code + " (stopped by PyBox: the client went away)";
    case TerminationMechanism::out_of_memory:
        return code + (engine_denied_oom(receipt) ? " (Out of memory: counted by the kernel)"
                                                  : " (Out of memory: reported by the engine)");
    case TerminationMechanism::not_started:
        return "not started";
    case TerminationMechanism::engine_lost:
        return code + " (the engine stopped answering; the end of the program was not observed)";
    case TerminationMechanism::unrecognized:
        return code + " (ended as " + unrecognized_name(receipt, "observed.termination.mechanism") +
               ", which this pybox does not know; " +
               (termination.exit_code ? "the engine reported exit code " + std::to_string(*termination.exit_code)
                                      : std::string("the engine reported no exit code")) +
               ")";
    }
    return code;
}

std::string settings_text(const Receipt& receipt)
{
    if (receipt.observed.policy_verified_before_start) {
        return "yes, before the program started";
    }
    const auto& policy = receipt.observed.effective_policy;
    if (const auto* mismatches = policy.is_object() ? policy.get_object().if_contains("mismatches") : nullptr;
        mismatches != nullptr && mismatches->is_array() && !mismatches->get_array().empty()) {
        std::string fields;
        for (const auto& mismatch : mismatches->get_array()) {
            const json::value* field = &mismatch;
            if (mismatch.is_object() && mismatch.get_object().contains("field")) {
                field = &mismatch.get_object().at("field");
            }
            fields += fields.empty() ? "" : ", ";
            fields += field->is_string() ? terminal_safe(field->get_string()) : "?";
        }
        return "NO — the engine's settings differed from the policy (" + fields + ")";
    }
    if (receipt.cleanup.status == CleanupStatus::not_created) {
        return "NO — no box was created";
    }
    return "NO — the settings were not verified before start";
}

std::string cleanup_text(const Receipt& receipt)
{
    switch (receipt.cleanup.status) {
    case CleanupStatus::removed:
        if (receipt.unknown.contains(std::string(proto::k_unknown_node_cleanup)))
            return "deleted, its API object confirmed gone (the node's cleanup of its containers not observed)";
        return "removed and confirmed gone";
    case CleanupStatus::not_created:
        return "never created";
    case CleanupStatus::removal_unconfirmed:
        return "REMOVAL NOT CONFIRMED — " +
               (receipt.cleanup.error ? terminal_safe(*receipt.cleanup.error)
                                      : std::string("the sweep removes it once its expiry label has passed"));
    case CleanupStatus::unrecognized:
        return unrecognized_name(receipt, "cleanup.status") + ", which this pybox does not know";
    }
    return "unknown";
}

// A counter of observed.resources.metrics: its final value, else its highest sample (shown as a
// lower bound), else nothing.
struct ShownCounter {
    std::int64_t value = 0;
    bool final = false;
};

std::optional<ShownCounter> shown_counter(const json::object& resources, std::string_view metric)
{
    const auto* metrics = resources.if_contains("metrics");
    const auto* record = metrics != nullptr && metrics->is_object() ? metrics->get_object().if_contains(metric) : nullptr;
    if (record == nullptr || !record->is_object()) return std::nullopt;
    if (const auto* final = record->get_object().if_contains("final"); final != nullptr && final->is_int64())
        return ShownCounter{final->get_int64(), true};
    if (const auto* max = record->get_object().if_contains("max"); max != nullptr && max->is_int64())
        return ShownCounter{max->get_int64(), false};
    return std::nullopt;
}

std::string decimal(double value, const char* format)
{
    std::array<char, 32> buffer{};
    std::snprintf(buffer.data(), buffer.size(), format, value);
    return buffer.data();
}

// "memory peak 67.8 MiB · CPU 0.063 s · pids peak 6", a value only sampled shown as "≥ ...".
std::string figures_text(const json::object& resources)
{
    std::string text;
    const auto add = [&](std::string_view label, std::string_view metric, auto format) {
        const auto counter = shown_counter(resources, metric);
        if (!text.empty()) text += " · ";
        text += label;
        text += counter ? (counter->final ? "" : "≥ ") + format(counter->value) : std::string("unknown");
    };
    add("memory peak ", "memory.peak",
        [](std::int64_t bytes) { return decimal(static_cast<double>(bytes) / (1024.0 * 1024.0), "%.1f") + " MiB"; });
    add("CPU ", "cpu.stat.usage_usec", [](std::int64_t usec) { return decimal(static_cast<double>(usec) / 1e6, "%.3f") + " s"; });
    add("pids peak ", "pids.peak", [](std::int64_t pids) { return std::to_string(pids); });
    return text;
}

// From observed.resources.limits_hit: the limits the kernel counted as hit; "none" only when
// every counter's final value says so.
std::string limits_text(const json::object& resources)
{
    const auto* hits = resources.if_contains("limits_hit");
    if (hits == nullptr || !hits->is_object()) return "unknown";
    std::string hit;
    bool all_known = true;
    for (const auto& [key, label] : {std::pair<std::string_view, std::string_view>{"pids", "pids limit hit"},
                                     {"cpu_throttled", "CPU throttled"},
                                     {"oom_kill", "OOM kill"}}) {
        const auto* value = hits->get_object().if_contains(key);
        if (value != nullptr && value->is_bool() && value->get_bool()) {
            hit += (hit.empty() ? "" : ", ") + std::string(label);
        } else if (value == nullptr || !value->is_bool()) {
            all_known = false;
        }
    }
    if (!hit.empty()) return hit;
    return all_known ? "none hit" : "none seen (their final counters are unknown)";
}

// The "From the kernel" lines: (label, value) pairs.
std::vector<std::pair<std::string, std::string>> resources_lines(const Receipt& receipt)
{
    const auto& resources = receipt.observed.resources;
    const auto* object = resources.if_object();
    const auto* status = object != nullptr ? object->if_contains("status") : nullptr;
    if (status == nullptr || !status->is_string()) return {{"Resources", "unknown: not recorded"}};
    if (status->get_string() == "UNKNOWN" || status->get_string() == "UNREADABLE") {
        const auto reason = unknown_reason(receipt, "resources");
        const char* prefix = status->get_string() == "UNKNOWN" ? "unknown: " : "unreadable: ";
        return {{"Resources", prefix + (reason ? *reason : std::string("not recorded"))}};
    }
    return {{"Resources", figures_text(*object)}, {"Limits", limits_text(*object)}};
}

std::string stream_text(const StreamRecord& stream)
{
    if (stream.truncated()) {
        return std::to_string(stream.bytes.size()) + " of " + std::to_string(stream.total_bytes) +
               " bytes kept, " + std::to_string(stream.dropped_bytes()) + " dropped";
    }
    return std::to_string(stream.total_bytes) + (stream.total_bytes == 1 ? " byte" : " bytes");
}

double shown_duration(const Receipt& receipt)
{
    for (const auto& phase : receipt.lifecycle.phases) {
        if (phase.name == "run") {
            return phase.duration_s;
        }
    }
    return receipt.lifecycle.total_s;
}

// "2 files, 18 bytes" for a list of file records.
std::string files_total(const std::vector<FileRecord>& files)
{
    std::uint64_t bytes = 0;
    for (const auto& file : files) bytes += file.bytes;
    return std::to_string(files.size()) + (files.size() == 1 ? " file, " : " files, ") + std::to_string(bytes) + " bytes";
}

std::string mebibytes(std::int64_t bytes)
{
    return decimal(static_cast<double>(bytes) / (1024.0 * 1024.0), "%.0f") + " MiB";
}

void add_output_lines(std::string& out, const Receipt& receipt)
{
    out += "Output\n";
    add_line(out, "stdout", stream_text(receipt.capture.stdout_stream));
    add_line(out, "stderr", stream_text(receipt.capture.stderr_stream));
    if (receipt.capture.stream_error) {
        add_line(out, "Stream error", terminal_safe(*receipt.capture.stream_error));
    }
}

void add_explanation_lines(std::string& out, const Receipt& receipt)
{
    if (!receipt.explanations.empty()) {
        out += "Explanations\n";
        for (const auto& explanation : receipt.explanations) {
            add_line(out, terminal_safe(explanation.code), terminal_safe(explanation.message));
        }
    }
    if (!receipt.unrecognized.empty()) {
        out += "Not understood  values from a newer pyboxd; --json shows the whole receipt\n";
        for (const auto& [path, value] : receipt.unrecognized) {
            add_line(out, terminal_safe(path), terminal_safe(value));
        }
    }
}

// An unsealed run (docs/unsealed.md): nothing of a box to show, and the first line says so.
std::string render_unsealed(const Receipt& receipt, const UnsealedFacts& facts)
{
    std::string out = "PyBox receipt · UNSEALED run " + terminal_safe(receipt.identity.run_id.substr(0, 8)) +
                      " · host python · " + seconds_3(shown_duration(receipt)) + " s of " +
                      util::format_number(receipt.configured.wall_timeout_s) + " s\n\n";
    out += "UNSEALED  no container: the program ran as you, with your files and your network\n";
    add_line(out, "Exit code", exit_code_text(receipt));
    add_line(out, "Interpreter", terminal_safe(facts.python));
    add_line(out, "Network", "not blocked");
    add_line(out, "Files", "every file you may read or write");
    const auto& limits = facts.limits;
    add_line(out, "Limits", "address space " + mebibytes(limits.address_space_bytes) + " · processes " +
                                std::to_string(limits.processes) + " (all of yours; " +
                                std::to_string(limits.user_processes_at_start) + " before the run) · CPU " +
                                std::to_string(limits.cpu_seconds) + " s · open files " +
                                std::to_string(limits.open_files));
    add_line(out, "Working folder", facts.working_folder_removed ? "removed" : "NOT REMOVED — " + terminal_safe(facts.working_folder));
    add_output_lines(out, receipt);
    add_explanation_lines(out, receipt);
    return out;
}

}  // namespace

ViewerHost this_viewer_host()
{
#if defined(__APPLE__)
    return ViewerHost::mac;
#else
    return ViewerHost::linux_host;
#endif
}

std::string render_short_receipt(const Receipt& receipt, ViewerHost host)
{
    if (const auto& facts = receipt.unsealed()) return render_unsealed(receipt, *facts);
    const auto& identity = receipt.identity;
    std::string out = "PyBox receipt · run " + terminal_safe(identity.run_id.substr(0, 8)) + " · image " +
                      terminal_safe(identity.image) + " · " + seconds_3(shown_duration(receipt)) + " s of " +
                      util::format_number(receipt.configured.wall_timeout_s) + " s\n\n";

    const bool verified = receipt.observed.policy_verified_before_start;
    out += "From the container engine  checked before start, read back after\n";
    add_line(out, "Exit code", exit_code_text(receipt));
    add_line(out, "Settings checked", settings_text(receipt));
    add_line(out, host == ViewerHost::mac ? "Mac folders shared" : "Host folders shared", verified ? "none" : "not checked");
    add_line(out, "Network", receipt.unknown.contains(std::string(proto::k_unknown_network_enforcement))
                                 ? "a network of its own, denied by policy (the enforcement not observed)"
                                 : terminal_safe(receipt.configured.policy.network));
    if (const auto& environment = receipt.observed.environment) add_line(out, "Environment", environment_text(*environment));
    // Only a pool has engines to tell apart; the local engine's runs read as before.
    if (receipt.engine && receipt.engine->id != "local")
        add_line(out, "Engine", terminal_safe(receipt.engine->id + " (" + receipt.engine->address + ")"));
    add_line(out, "Box", cleanup_text(receipt));
    if (receipt.lifecycle.preparation)
        add_line(out, "Warm box", "made and started before the request, waited " +
                                      seconds_3(receipt.lifecycle.preparation->waited_s) + " s for the program");

    out += "From the kernel\n";
    for (const auto& [label, value] : resources_lines(receipt)) add_line(out, label, value);

    add_output_lines(out, receipt);

    if (receipt.files) {
        const auto& files = *receipt.files;
        out += "Files\n";
        add_line(out, "in", files_total(files.inputs));
        add_line(out, "back", files_total(files.outputs));
        const auto skipped = files.skipped.size() + files.skipped_unlisted;
        if (skipped > 0) add_line(out, "skipped", std::to_string(skipped) + " (files.skipped in --json says why)");
        if (!files.errors.empty()) add_line(out, "not returned", terminal_safe(files.errors.front()));
    }

    add_explanation_lines(out, receipt);
    return out;
}

std::string render_not_kept(std::string_view why)
{
    std::string out = "Kept\n";
    add_line(out, "Receipt", "NOT KEPT — " + terminal_safe(why) +
                                 " `pybox receipts show` cannot show it: this answer holds its only copy.");
    return out;
}

}  // namespace pybox::client
