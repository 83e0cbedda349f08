#include "client/unsealed/unsealed_plan.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/posix.hpp"
#include "common/process.hpp"
#include "proto/box_policy.hpp"
#include "util/path_value.hpp"

#include <boost/json/parse.hpp>

#include <cmath>

namespace pybox::client::unsealed {

namespace json = boost::json;

namespace {

const proto::BoxPolicy& stdlib_policy()
{
    static const proto::BoxPolicy policy = *proto::policy_for_image("stdlib");
    return policy;
}

Error config_invalid(const std::filesystem::path& file, const std::string& why)
{
    return make_error(api_error::k_config_invalid, file.string() + ": " + why + ".");
}

json::object stream_evidence(const proto::StreamRecord& stream, std::string_view name)
{
    return {{"stream", name}, {"bytes_kept", stream.bytes.size()}, {"bytes_dropped", stream.dropped_bytes()}};
}

proto::StreamRecord stream_record(const KeptStream& kept) { return {kept.bytes, kept.total_bytes}; }

void decide_termination(const UnsealedEvidence& evidence, proto::Receipt& receipt)
{
    const auto& result = evidence.result;
    auto& termination = receipt.observed.termination;
    termination.mechanism = proto::TerminationMechanism::target_exit_observed;
    termination.deadline_kill_sent = result.deadline_kill_sent;
    if (result.deadline_kill_sent) {
        termination.deadline_kill_answer =
            result.deadline_kill_delivered ? proto::KillAnswer::accepted : proto::KillAnswer::failed;
        termination.deadline_kill_sent_at = evidence.deadline_kill_sent_at;
        receipt.lifecycle.timeouts.push_back("deadline");
    }
    if (result.exit_code) {
        termination.exit_code = *result.exit_code;
        if (result.deadline_kill_sent) {
            receipt.explanations.push_back(proto::explain(
                "ENDED_BEFORE_KILL", "The program ended by itself just before PyBox's kill at the deadline.",
                {{"exit_code", *result.exit_code}}));
        } else {
            receipt.explanations.push_back(proto::explain(
                "EXITED", "The program ended by itself with exit code " + std::to_string(*result.exit_code) + ".",
                {{"exit_code", *result.exit_code}}));
        }
        return;
    }
    if (!result.signal) return;  // no wait status: cannot happen once reaped
    termination.signal = *result.signal;
    if (result.deadline_kill_sent && *result.signal == k_signal_kill) {
        termination.mechanism = proto::TerminationMechanism::deadline_kill;
        termination.signal_source = proto::SignalSource::pybox_kill;
        receipt.explanations.push_back(proto::explain(
            "DEADLINE_KILL", "PyBox sent SIGKILL to the program's process group at the deadline, and it ended.",
            {{"signal", k_signal_kill}, {"wait_status", "killed by signal 9"}}));
        return;
    }
    termination.signal_source = proto::SignalSource::wait_status;
    receipt.explanations.push_back(proto::explain(
        "ENDED_BY_SIGNAL",
        "A signal ended the program (" + std::to_string(*result.signal) +
            "); its wait status does not say who sent it: the kernel sends SIGXCPU and then SIGKILL at the CPU "
            "limit and SIGXFSZ at the file size limit, and the program or another process of yours may send any.",
        {{"signal", *result.signal}}));
}

}  // namespace

Expected<std::filesystem::path> python_from_config(const std::optional<std::string>& text,
                                                   const std::filesystem::path& file)
{
    if (!text) return std::filesystem::path(k_default_python);
    boost::system::error_code ec;
    const json::value root = json::parse(*text, ec);
    if (ec) return config_invalid(file, "is not valid JSON: " + ec.message());
    const auto* object = root.if_object();
    if (object == nullptr) return config_invalid(file, "must hold one JSON object");
    const auto* value = object->if_contains(k_python_key);
    if (value == nullptr) return std::filesystem::path(k_default_python);
    const std::string key = "key \"" + std::string(k_python_key) + "\" ";
    if (value->is_string() && !value->get_string().starts_with("/"))
        return config_invalid(file, key + "must be an absolute path (the interpreter is never looked up in $PATH)");
    if (auto problem = util::absolute_path_problem(*value, k_max_path_bytes)) return config_invalid(file, key + *problem);
    return util::normal_path(*value);
}

proto::HostLimits plan_limits(double timeout_s, std::int64_t user_tasks)
{
    const auto& policy = stdlib_policy();
    proto::HostLimits limits;
    limits.address_space_bytes = policy.memory_bytes;
    limits.user_processes_at_start = user_tasks;
    limits.processes = user_tasks + policy.pids;
    limits.cpu_seconds = static_cast<std::int64_t>(std::ceil(timeout_s)) + 1;
    limits.file_size_bytes = policy.tmpfs_bytes;
    limits.open_files = policy.open_files;
    limits.core_bytes = policy.core_dump_bytes;
    return limits;
}

std::vector<ResourceLimit> resource_limits(const proto::HostLimits& limits)
{
    return {
        {ResourceKind::address_space, limits.address_space_bytes, limits.address_space_bytes},
        {ResourceKind::processes, limits.processes, limits.processes},
        {ResourceKind::cpu_seconds, limits.cpu_seconds, limits.cpu_seconds + 1},
        {ResourceKind::file_size, limits.file_size_bytes, limits.file_size_bytes},
        {ResourceKind::open_files, limits.open_files, limits.open_files},
        {ResourceKind::core_size, limits.core_bytes, limits.core_bytes},
    };
}

std::vector<std::string> scrubbed_environment(const std::filesystem::path& working_folder)
{
    const std::string folder = working_folder.string();
    return {"PATH=" + std::string(k_path),
            "HOME=" + folder,
            "TMPDIR=" + folder,
            "LANG=C.UTF-8",
            "LC_ALL=C.UTF-8",
            "PYTHONDONTWRITEBYTECODE=1",
            "PYTHONIOENCODING=utf-8",
            "PYTHONUNBUFFERED=1"};
}

std::vector<std::string> python_command(const std::filesystem::path& python)
{
    return {python.string(), "-I", "-B", "-"};
}

proto::Receipt unsealed_receipt(const UnsealedEvidence& evidence)
{
    proto::Receipt receipt = proto::make_unsealed_receipt(evidence.facts);
    receipt.identity.run_id = evidence.run_id;
    receipt.identity.created_at = evidence.created_at;
    receipt.source_sha256 = evidence.source_sha256;
    receipt.source_bytes = evidence.source_bytes;

    auto& configured = receipt.configured;
    configured.wall_timeout_s = evidence.timeout_s;
    configured.output_limit_bytes = static_cast<std::int64_t>(evidence.output_limit_bytes);
    configured.command = evidence.command;
    configured.policy.network = "not blocked";
    configured.policy.user = evidence.user;
    configured.policy.open_files = evidence.facts.limits.open_files;
    configured.policy.core_dump_bytes = evidence.facts.limits.core_bytes;
    configured.policy.no_new_privileges = true;

    receipt.explanations.push_back(proto::explain(
        "UNSEALED_RUN",
        "Unsealed: the program ran with the host's python as you, without a container; it could read and "
        "write your files and use the network. Only the process limits, the deadline and the output cap held.",
        {{"python", evidence.facts.python}, {"isolation", "none"}}));
    decide_termination(evidence, receipt);

    const auto& result = evidence.result;
    auto& capture = receipt.capture;
    capture.provenance = "target byte streams via bounded pipes of the pybox client; untrusted content";
    capture.stdout_stream = stream_record(result.stdout_stream);
    capture.stderr_stream = stream_record(result.stderr_stream);
    for (const auto* stream : {&capture.stdout_stream, &capture.stderr_stream}) {
        if (!stream->truncated()) continue;
        const std::string_view name = stream == &capture.stdout_stream ? "stdout" : "stderr";
        receipt.explanations.push_back(proto::explain(
            "OUTPUT_TRUNCATED", std::string(name) + " exceeded the output limit; the rest was counted and dropped.",
            stream_evidence(*stream, name)));
    }
    if (!result.streams_ended) {
        capture.stream_error = "the output was still held open when the run ended (a process that left the "
                               "program's process group may hold it)";
        receipt.explanations.push_back(proto::explain("STREAM_ERROR", *capture.stream_error));
    }
    capture.output_complete =
        result.streams_ended && !capture.stdout_stream.truncated() && !capture.stderr_stream.truncated();
    if (evidence.facts.group_killed_after_exit)
        receipt.explanations.push_back(proto::explain(
            "PROCESSES_LEFT_KILLED",
            "Processes of the program were still running in its process group after it ended; PyBox killed them."));
    if (!evidence.facts.working_folder_removed)
        receipt.explanations.push_back(proto::explain(
            "WORKING_FOLDER_NOT_REMOVED", "The temporary working folder could not be removed entirely.",
            {{"working_folder", evidence.facts.working_folder}}));

    const double run_s = seconds_between(result.started, result.ended);
    auto& lifecycle = receipt.lifecycle;
    lifecycle.phases = {
        {"prepare", 0, evidence.prepare_s, "ok"},
        {"run", evidence.prepare_s, run_s, result.deadline_kill_sent ? "timeout" : "ok"},
        {"cleanup", evidence.prepare_s + run_s, evidence.cleanup_s,
         evidence.facts.working_folder_removed ? "ok" : "failed"},
    };
    lifecycle.last_phase = "cleanup";
    lifecycle.total_s = evidence.prepare_s + run_s + evidence.cleanup_s;
    return receipt;
}

}  // namespace pybox::client::unsealed
