#include "proto/receipt.hpp"

#include "proto/receipt_encoding.hpp"
#include "util/name_table.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/string.hpp>

#include <array>
#include <utility>

namespace pybox::proto {

namespace json = boost::json;

namespace {

using detail::k_encoding_base64;
using detail::k_encoding_utf8;

constexpr std::array<std::pair<TerminationMechanism, std::string_view>, 7> k_mechanism_names{{
    {TerminationMechanism::target_exit_observed, "TARGET_EXIT_OBSERVED"},
    {TerminationMechanism::deadline_kill, "DEADLINE_KILL"},
    {TerminationMechanism::cause_not_established, "CAUSE_NOT_ESTABLISHED"},
    {TerminationMechanism::stopped_on_disconnect, "STOPPED_ON_DISCONNECT"},
    {TerminationMechanism::out_of_memory, "OUT_OF_MEMORY"},
    {TerminationMechanism::not_started, "NOT_STARTED"},
    {TerminationMechanism::engine_lost, "ENGINE_LOST"},
}};

constexpr std::array<std::pair<CleanupStatus, std::string_view>, 3> k_cleanup_names{{
    {CleanupStatus::removed, "REMOVED"},
    {CleanupStatus::not_created, "NOT_CREATED"},
    {CleanupStatus::removal_unconfirmed, "REMOVAL_UNCONFIRMED"},
}};

constexpr std::array<std::pair<KillAnswer, std::string_view>, 3> k_kill_answer_names{{
    {KillAnswer::accepted, "accepted"},
    {KillAnswer::not_running, "not_running"},
    {KillAnswer::failed, "failed"},
}};

constexpr std::array<std::pair<SignalSource, std::string_view>, 4> k_signal_source_names{{
    {SignalSource::pybox_kill, "pybox_kill"},
    {SignalSource::oom_kill, "oom_kill"},
    {SignalSource::wait_status, "wait_status"},
    {SignalSource::box_timer, "box_timer"},
}};

constexpr std::string_view k_engine_offset_source =
    "GET /info SystemTime, bracketed by two readings of the daemon wall clock";

json::object clock_domains_to_json(const ClockDomains& domains)
{
    json::value offset = nullptr;
    if (domains.engine_offset) {
        offset = json::object{{"min", domains.engine_offset->min_ns},
                              {"max", domains.engine_offset->max_ns},
                              {"source", k_engine_offset_source}};
    }
    return {
        {"lifecycle", "daemon monotonic clock: seconds from the start of the run (lifecycle.phases, "
                      "lifecycle.timing); a warm box's from the start of its making (lifecycle.preparation)"},
        {"lifecycle.box_started_at", "daemon wall clock, UTC"},
        {"identity.created_at", "daemon wall clock, UTC"},
        {"identity.expires_at", "daemon wall clock, unix seconds"},
        {"observed.termination.deadline_kill_sent_at", "daemon wall clock, UTC"},
        {"observed.engine_state", domains.engine_clocks.engine_state},
        {"observed.termination.engine_lifetime_s", domains.engine_clocks.engine_lifetime},
        {"observed.resources", "the watcher's kernel clock: CLOCK_BOOTTIME read from /proc/uptime, centiseconds"},
        {"engine_offset_ns", std::move(offset)},
    };
}

json::object unsealed_clock_domains_to_json()
{
    return {
        {"lifecycle", "pybox client monotonic clock: seconds from the start of the run (lifecycle.phases, lifecycle.timing)"},
        {"identity.created_at", "pybox client wall clock, UTC"},
        {"observed.termination.deadline_kill_sent_at", "pybox client wall clock, UTC"},
        {"engine_offset_ns", nullptr},
    };
}

json::object unsealed_to_json(const UnsealedFacts& facts)
{
    const auto& limits = facts.limits;
    return {{"python", facts.python},
            {"working_folder", facts.working_folder},
            {"working_folder_removed", facts.working_folder_removed},
            {"environment", json::array(facts.environment.begin(), facts.environment.end())},
            {"limits", json::object{{"address_space_bytes", limits.address_space_bytes},
                                    {"processes", limits.processes},
                                    {"user_processes_at_start", limits.user_processes_at_start},
                                    {"cpu_seconds", limits.cpu_seconds},
                                    {"file_size_bytes", limits.file_size_bytes},
                                    {"open_files", limits.open_files},
                                    {"core_bytes", limits.core_bytes}}},
            {"group_killed_after_exit", facts.group_killed_after_exit}};
}

// Sets the value at a dotted path (every step but the last an object that exists) to null.
void set_null(json::object& root, std::string_view path)
{
    json::object* object = &root;
    for (auto dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
        object = &object->at(path.substr(0, dot)).as_object();
        path.remove_prefix(dot + 1);
    }
    object->at(path) = nullptr;
}

json::array phases_to_json(const std::vector<Phase>& phases)
{
    json::array out;
    for (const auto& phase : phases)
        out.push_back(json::object{{"name", phase.name},
                                   {"started_s", phase.started_s},
                                   {"duration_s", phase.duration_s},
                                   {"outcome", phase.outcome}});
    return out;
}

template <class T>
json::value optional_to_json(const std::optional<T>& value)
{
    if (!value) {
        return nullptr;
    }
    return json::value(*value);
}

json::array strings_to_json(const std::vector<std::string>& strings)
{
    return json::array(strings.begin(), strings.end());
}

void put_stream(json::object& capture, const std::string& name, const StreamRecord& stream)
{
    const bool utf8 = util::is_valid_utf8(stream.bytes);
    const std::uint64_t kept = stream.bytes.size();
    capture[name] = utf8 ? stream.bytes : util::base64_encode(stream.bytes);
    capture[name + "_encoding"] = utf8 ? k_encoding_utf8 : k_encoding_base64;
    capture[name + "_bytes"] = stream.total_bytes;
    capture[name + "_bytes_kept"] = kept;
    capture[name + "_bytes_dropped"] = stream.total_bytes > kept ? stream.total_bytes - kept : 0;
    capture[name + "_truncated"] = stream.truncated();
}

template <class Enum>
json::value optional_name(const std::optional<Enum>& value)
{
    if (!value) {
        return nullptr;
    }
    return json::value(to_string(*value));
}

json::array file_records_to_json(const std::vector<FileRecord>& files)
{
    json::array result;
    for (const FileRecord& file : files) {
        result.push_back(json::object{{"name", file.name}, {"bytes", file.bytes}, {"sha256", file.sha256}});
    }
    return result;
}

json::object files_to_json(const FilesRecord& files)
{
    json::array skipped;
    for (const SkippedFile& file : files.skipped) {
        skipped.push_back(json::object{{"name", file.name}, {"reason", file.reason}});
    }
    return json::object{{"source", files.source},
                        {"working_folder", files.working_folder},
                        {"output_folder", files.output_folder},
                        {"inputs", file_records_to_json(files.inputs)},
                        {"outputs", file_records_to_json(files.outputs)},
                        {"skipped", std::move(skipped)},
                        {"skipped_unlisted", files.skipped_unlisted},
                        {"errors", strings_to_json(files.errors)}};
}

json::value process_end_to_json(const std::optional<ProcessEndRecord>& end)
{
    if (!end) return nullptr;
    return json::object{{"source", end->source},
                        {"exit_code", optional_to_json(end->exit_code)},
                        {"signal", optional_to_json(end->signal)},
                        {"since_kill_sent_s", optional_to_json(end->since_kill_sent_s)},
                        {"since_delivery_s", optional_to_json(end->since_delivery_s)}};
}

json::object termination_to_json(const Termination& termination)
{
    return {{"mechanism", to_string(termination.mechanism)},
            {"exit_code", optional_to_json(termination.exit_code)},
            {"signal", optional_to_json(termination.signal)},
            {"signal_source", optional_name(termination.signal_source)},
            {"inferred_signal", optional_to_json(termination.inferred_signal)},
            {"deadline_kill_sent", termination.deadline_kill_sent},
            {"deadline_kill_answer", optional_name(termination.deadline_kill_answer)},
            {"deadline_kill_sent_at", optional_to_json(termination.deadline_kill_sent_at)},
            {"engine_lifetime_s", optional_to_json(termination.engine_lifetime_s)},
            {"program_end", process_end_to_json(termination.program_end)},
            {"box_end", process_end_to_json(termination.box_end)}};
}

}  // namespace

const std::vector<SealedOnlyField>& sealed_only_fields()
{
    static constexpr std::string_view k_no_daemon = "unsealed run: no daemon, engine or image took part";
    static constexpr std::string_view k_no_box = "unsealed run: no container, so no box to create, check, time or remove";
    static constexpr std::string_view k_no_cgroup =
        "unsealed run: no container, so no cgroup limit; the process limits are in unsealed.limits";
    static const std::vector<SealedOnlyField> fields{
        {"identity.installation_id", k_no_daemon},
        {"identity.image", k_no_daemon},
        {"identity.image_id", k_no_daemon},
        {"identity.recipe_sha256", k_no_daemon},
        {"identity.expires_at", k_no_box},
        {"identity.daemon_version", k_no_daemon},
        {"engine", k_no_daemon},
        {"container_id", k_no_box},
        {"configured.guest_timer_s", k_no_box},
        {"configured.memory_bytes", k_no_cgroup},
        {"configured.memory_swap_bytes", k_no_cgroup},
        {"configured.pids", k_no_cgroup},
        {"configured.cpu_cores", k_no_cgroup},
        {"configured.nano_cpus", k_no_cgroup},
        {"configured.readonly_root", "unsealed run: the program sees and may write every file the user may"},
        {"configured.tmpfs", "unsealed run: no private /tmp; the working folder is unsealed.working_folder"},
        {"configured.log_driver", k_no_daemon},
        {"configured.capabilities_dropped", "unsealed run: the program has the user's own privileges"},
        {"configured.seccomp", "unsealed run: no seccomp filter; every system call the user may make is allowed"},
        {"configured.seccomp_sha256", "unsealed run: no seccomp filter"},
        {"configured.files_helper_sha256", "unsealed run: no files move"},
        {"observed.policy_verified_before_start", k_no_box},
        {"observed.effective_policy", k_no_box},
        {"observed.engine_state", k_no_daemon},
        {"observed.resources", "unsealed run: no cgroup, so no kernel watcher"},
        {"observed.termination.engine_lifetime_s", k_no_daemon},
        {"observed.environment", "unsealed run: the pybox client set the program's whole environment, "
                                 "unsealed.environment",
         true},
        {"lifecycle.warm", k_no_box},
        {"lifecycle.box_started_at", k_no_box},
        {"lifecycle.preparation", k_no_box},
        {"cleanup", "unsealed run: no box to remove; the working folder's removal is unsealed.working_folder_removed"},
        {"clock_domains.engine_offset_ns", k_no_daemon},
    };
    return fields;
}

std::string_view to_string(TerminationMechanism mechanism) { return util::name_of(k_mechanism_names, mechanism); }

std::optional<TerminationMechanism> termination_from_string(std::string_view text)
{
    return util::value_of(k_mechanism_names, text);
}

std::string_view to_string(KillAnswer answer) { return util::name_of(k_kill_answer_names, answer); }

std::optional<KillAnswer> kill_answer_from_string(std::string_view text) { return util::value_of(k_kill_answer_names, text); }

std::string_view to_string(SignalSource source) { return util::name_of(k_signal_source_names, source); }

std::optional<SignalSource> signal_source_from_string(std::string_view text)
{
    return util::value_of(k_signal_source_names, text);
}

std::string_view to_string(CleanupStatus status) { return util::name_of(k_cleanup_names, status); }

std::optional<CleanupStatus> cleanup_from_string(std::string_view text) { return util::value_of(k_cleanup_names, text); }

json::value receipt_to_json(const Receipt& receipt)
{
    const auto& identity = receipt.identity;
    const auto& configured = receipt.configured;
    const auto& policy = configured.policy;
    const auto& observed = receipt.observed;
    const auto& termination = observed.termination;
    const auto& capture = receipt.capture;
    const auto& lifecycle = receipt.lifecycle;
    const auto& cleanup = receipt.cleanup;

    json::object capture_json;
    put_stream(capture_json, "stdout", capture.stdout_stream);
    put_stream(capture_json, "stderr", capture.stderr_stream);
    capture_json["output_complete"] = capture.output_complete;
    capture_json["stream_error"] = optional_to_json(capture.stream_error);
    capture_json["output_limit_bytes"] = configured.output_limit_bytes;
    capture_json["provenance"] = capture.provenance;

    json::value preparation = nullptr;
    if (lifecycle.preparation)
        preparation = json::object{{"phases", phases_to_json(lifecycle.preparation->phases)},
                                   {"total_s", lifecycle.preparation->total_s},
                                   {"waited_s", lifecycle.preparation->waited_s}};
    json::object unknown;
    json::object unknown_reasons;
    for (const auto key : k_seed_unknown_keys) unknown[key] = receipt.unknown.contains(std::string(key));
    for (const auto& [key, reason] : receipt.unknown) {
        unknown[key] = true;
        unknown_reasons[key] = reason;
    }
    json::array explanations;
    for (const auto& explanation : receipt.explanations) {
        explanations.push_back(json::object{{"code", explanation.code},
                                            {"message", explanation.message},
                                            {"evidence", explanation.evidence}});
    }

    json::object not_applicable;
    if (!receipt.sealed())
        for (const auto& field : sealed_only_fields()) not_applicable[field.path] = field.reason;

    json::object document{
        {"schema_version", k_receipt_schema_version},
        {"sealed", receipt.sealed()},
        {"isolation", receipt.sealed() ? "container" : "none"},
        {"identity", json::object{{"run_id", identity.run_id},
                                  {"installation_id", identity.installation_id},
                                  {"image", identity.image},
                                  {"image_id", identity.image_id},
                                  {"recipe_sha256", identity.recipe_sha256},
                                  {"created_at", identity.created_at},
                                  {"expires_at", identity.expires_at},
                                  {"daemon_version", identity.daemon_version}}},
        {"engine", receipt.engine ? json::value(json::object{{"id", receipt.engine->id},
                                                             {"address", receipt.engine->address}})
                                  : json::value(nullptr)},
        {"container_id", receipt.container_id.empty() ? json::value(nullptr) : json::value(receipt.container_id)},
        {"submission", json::object{{"source_sha256", receipt.source_sha256},
                                    {"source_bytes", receipt.source_bytes}}},
        {"configured", json::object{{"wall_timeout_s", configured.wall_timeout_s},
                                    {"guest_timer_s", configured.guest_timer_s},
                                    {"output_limit_bytes", configured.output_limit_bytes},
                                    {"memory_bytes", policy.memory_bytes},
                                    {"memory_swap_bytes", policy.memory_bytes},
                                    {"pids", policy.pids},
                                    {"cpu_cores", policy.cpu_cores()},
                                    {"nano_cpus", policy.cpu_millis * k_nano_cpus_per_milli},
                                    {"network", policy.network},
                                    {"user", policy.user},
                                    {"readonly_root", policy.readonly_root},
                                    {"tmpfs", json::object{{"path", policy.tmpfs_path},
                                                           {"bytes", policy.tmpfs_bytes},
                                                           {"options", tmpfs_flags(policy)}}},
                                    {"open_files", policy.open_files},
                                    {"core_dump_bytes", policy.core_dump_bytes},
                                    {"log_driver", k_log_driver},
                                    {"no_new_privileges", policy.no_new_privileges},
                                    {"capabilities_dropped", policy.capabilities_dropped},
                                    {"seccomp", policy.seccomp},
                                    {"seccomp_sha256", policy.seccomp_sha256},
                                    {"command", strings_to_json(configured.command)},
                                    {"files_helper_sha256", optional_to_json(configured.files_helper_sha256)}}},
        {"observed",
         json::object{{"policy_verified_before_start", observed.policy_verified_before_start},
                      {"effective_policy", observed.effective_policy},
                      {"engine_state", observed.engine_state},
                      {"resources", observed.resources},
                      {"termination", termination_to_json(termination)},
                      {"environment", observed.environment
                                          ? json::value(json::object{
                                                {"source", observed.environment->source},
                                                {"beyond_spec", strings_to_json(observed.environment->beyond_spec)}})
                                          : json::value(nullptr)}}},
        {"capture", std::move(capture_json)},
        {"lifecycle", json::object{{"warm", lifecycle.warm},
                                   {"box_started_at", optional_to_json(lifecycle.box_started_at)},
                                   {"preparation", std::move(preparation)},
                                   {"last_phase", lifecycle.last_phase},
                                   {"cancelled", lifecycle.cancelled},
                                   {"timeouts", strings_to_json(lifecycle.timeouts)},
                                   {"phases", phases_to_json(lifecycle.phases)},
                                   {"timing", json::object{{"queued_s", lifecycle.queued_s}, {"total_s", lifecycle.total_s}}}}},
        {"cleanup", json::object{{"status", to_string(cleanup.status)},
                                 {"removed", cleanup.removed},
                                 {"attempts", cleanup.attempts},
                                 {"error", optional_to_json(cleanup.error)},
                                 {"reconciliation", cleanup.reconciliation}}},
        {"clock_domains", receipt.sealed() ? clock_domains_to_json(receipt.clock_domains) : unsealed_clock_domains_to_json()},
        {"unknown", std::move(unknown)},
        {"unknown_reasons", std::move(unknown_reasons)},
        {"not_applicable", std::move(not_applicable)},
        {"files", receipt.files ? files_to_json(*receipt.files) : json::value(nullptr)},
        {"unsealed", receipt.unsealed() ? json::value(unsealed_to_json(*receipt.unsealed())) : json::value(nullptr)},
        {"explanations", std::move(explanations)},
    };
    if (!receipt.sealed())
        for (const auto& field : sealed_only_fields()) set_null(document, field.path);
    if (receipt.signature) document["signature"] = to_json(*receipt.signature);
    return document;
}

json::object to_json(const SignatureBlock& block)
{
    return json::object{{"algorithm", block.algorithm},
                        {"key_id", block.key_id},
                        {"public_key", block.public_key},
                        {"value", block.value}};
}

int exit_code_for(const Receipt& receipt)
{
    constexpr int k_deadline = 124;
    constexpr int k_could_not_run = 125;
    constexpr int k_out_of_memory = 137;
    const auto& termination = receipt.observed.termination;
    switch (termination.mechanism) {
    case TerminationMechanism::target_exit_observed:
    case TerminationMechanism::unrecognized:
        if (termination.exit_code && *termination.exit_code >= 0 && *termination.exit_code <= 255) {
            return static_cast<int>(*termination.exit_code);
        }
        // A program the kernel (or an unsealed run's wait status) saw killed by a signal from
        // inside: 128 + N, as a shell reports it.
        if (termination.signal_source == SignalSource::wait_status && termination.signal &&
            *termination.signal > 0 && *termination.signal < 128) {
            return 128 + *termination.signal;
        }
        return k_could_not_run;
    case TerminationMechanism::cause_not_established:
        // PyBox's kill is not established as the end: the box's own code, never the deadline's.
        if (termination.exit_code && *termination.exit_code >= 0 && *termination.exit_code <= 255) {
            return static_cast<int>(*termination.exit_code);
        }
        return k_could_not_run;
    case TerminationMechanism::deadline_kill:
        return k_deadline;
    case TerminationMechanism::out_of_memory:
        return k_out_of_memory;
    case TerminationMechanism::not_started:
    case TerminationMechanism::engine_lost:
    case TerminationMechanism::stopped_on_disconnect:
        return k_could_not_run;
    }
    return k_could_not_run;
}

}  // namespace pybox::proto
