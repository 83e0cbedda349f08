#include "common/api_error_codes.hpp"
#include "proto/receipt.hpp"

#include "proto/receipt_encoding.hpp"
#include "util/json_reader.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/string.hpp>

#include <algorithm>
#include <utility>

namespace pybox::proto {

namespace json = boost::json;

namespace {

using detail::k_encoding_base64;
using detail::k_encoding_utf8;

StreamRecord read_stream(util::ObjectReader& capture, const std::string& name)
{
    StreamRecord stream;
    const std::string text = capture.string(name);
    const std::string encoding = capture.string(name + "_encoding");
    if (encoding == k_encoding_utf8) {
        if (!util::is_valid_utf8(text)) {
            capture.fail(name, "is not valid UTF-8");
        }
        stream.bytes = text;
    } else if (encoding == k_encoding_base64) {
        auto decoded = util::base64_decode(text);
        if (!decoded) {
            capture.fail(name, "is not valid base64");
        } else {
            stream.bytes = std::move(*decoded);
        }
    } else {
        capture.fail(name + "_encoding", "must be \"utf-8\" or \"base64\"");
    }
    stream.total_bytes = capture.uint64(name + "_bytes");
    const std::uint64_t kept = capture.uint64(name + "_bytes_kept");
    const std::uint64_t dropped = capture.uint64(name + "_bytes_dropped");
    const bool truncated = capture.boolean(name + "_truncated");
    if (kept != stream.bytes.size()) {
        capture.fail(name + "_bytes_kept", "does not match the bytes in " + name);
    } else if (stream.total_bytes < kept || dropped != stream.total_bytes - kept) {
        capture.fail(name + "_bytes_dropped", "does not match " + name + "_bytes minus " + name + "_bytes_kept");
    } else if (truncated != stream.truncated()) {
        capture.fail(name + "_truncated", "does not match the byte counts");
    }
    return stream;
}

BoxPolicy read_policy(util::ObjectReader& configured)
{
    BoxPolicy policy;
    policy.memory_bytes = configured.int64("memory_bytes");
    if (configured.int64("memory_swap_bytes") != policy.memory_bytes) {
        configured.fail("memory_swap_bytes", "must equal memory_bytes (no swap)");
    }
    policy.pids = configured.int64("pids");
    configured.number("cpu_cores");  // derived from nano_cpus
    const std::int64_t nano_cpus = configured.int64("nano_cpus");
    if (nano_cpus % k_nano_cpus_per_milli != 0) configured.fail("nano_cpus", "must be whole thousandths of a core");
    policy.cpu_millis = nano_cpus / k_nano_cpus_per_milli;
    policy.network = configured.string("network");
    policy.user = configured.string("user");
    policy.readonly_root = configured.boolean("readonly_root");
    auto tmpfs = configured.object("tmpfs");
    policy.tmpfs_path = tmpfs.string("path");
    policy.tmpfs_bytes = tmpfs.int64("bytes");
    const std::string options = tmpfs.string("options");
    // The flags are those whose spelling (tmpfs_flags) is the text, of the eight sets there are.
    bool matched = false;
    for (unsigned set = 0; set < 8 && !matched; ++set) {
        policy.tmpfs_noexec = (set & 1U) != 0;
        policy.tmpfs_nodev = (set & 2U) != 0;
        policy.tmpfs_nosuid = (set & 4U) != 0;
        matched = tmpfs_flags(policy) == options;
    }
    if (!matched)
        tmpfs.fail("options", "must be mount flags among noexec, nodev and nosuid, comma-separated in that order");
    tmpfs.finish();
    policy.open_files = configured.int64("open_files");
    policy.core_dump_bytes = configured.int64("core_dump_bytes");
    if (configured.string("log_driver") != k_log_driver)
        configured.fail("log_driver", "must be \"" + std::string(k_log_driver) + "\"");
    policy.no_new_privileges = configured.boolean("no_new_privileges");
    policy.capabilities_dropped = configured.string("capabilities_dropped");
    policy.seccomp = configured.string("seccomp");
    policy.seccomp_sha256 = configured.string("seccomp_sha256");
    return policy;
}

// An enum value written by name. A name this build does not know is refused in strict mode; in
// tolerant mode it reads as Enum::unrecognized and is kept in `unrecognized` under its path.
template <class Enum>
Enum enum_value(util::ObjectReader& reader, std::string_view key, const std::string& text,
                std::optional<Enum> (*from_string)(std::string_view), Receipt& receipt)
{
    if (const auto value = from_string(text)) {
        return *value;
    }
    if (reader.mode() == util::ReadMode::strict) {
        reader.fail(key, "is not a known value");
    } else {
        receipt.unrecognized[reader.child_path(key)] = text;
    }
    return Enum::unrecognized;
}

template <class Enum>
Enum required_name(util::ObjectReader& reader, std::string_view key, std::optional<Enum> (*from_string)(std::string_view),
                   Receipt& receipt)
{
    return enum_value(reader, key, reader.string(key), from_string, receipt);
}

// Null, or a name as for required_name().
template <class Enum>
std::optional<Enum> optional_name(util::ObjectReader& reader, std::string_view key,
                                  std::optional<Enum> (*from_string)(std::string_view), Receipt& receipt)
{
    const auto text = reader.optional_string(key);
    if (!text) {
        return std::nullopt;
    }
    return enum_value(reader, key, *text, from_string, receipt);
}

// Null, or one process's end; absent in receipts of daemons before it was recorded.
std::optional<ProcessEndRecord> read_process_end(util::ObjectReader& reader, std::string_view key)
{
    const json::value* present = reader.if_present(key);
    if (present == nullptr || present->is_null()) return std::nullopt;
    auto end_reader = reader.object(key);
    ProcessEndRecord end;
    end.source = end_reader.string("source");
    end.exit_code = end_reader.optional_int64("exit_code");
    end_reader.small_int("signal", &end.signal);
    if (end.exit_code.has_value() == end.signal.has_value()) end_reader.fail("signal", "must be set exactly when exit_code is null");
    end.since_kill_sent_s = end_reader.optional_number("since_kill_sent_s");
    end.since_delivery_s = end_reader.optional_number("since_delivery_s");
    end_reader.finish();
    return end;
}

void read_termination(util::ObjectReader& reader, Receipt& receipt)
{
    Termination& termination = receipt.observed.termination;
    termination.mechanism = required_name(reader, "mechanism", &termination_from_string, receipt);
    termination.exit_code = reader.optional_int64("exit_code");
    reader.small_int("signal", &termination.signal);
    termination.signal_source = optional_name(reader, "signal_source", &signal_source_from_string, receipt);
    if (termination.signal.has_value() != termination.signal_source.has_value()) {
        reader.fail("signal_source", "must be set exactly when signal is");
    }
    reader.small_int("inferred_signal", &termination.inferred_signal);
    termination.deadline_kill_sent = reader.boolean("deadline_kill_sent");
    termination.deadline_kill_answer =
        optional_name(reader, "deadline_kill_answer", &kill_answer_from_string, receipt);
    termination.deadline_kill_sent_at = reader.optional_string("deadline_kill_sent_at");
    if (termination.deadline_kill_sent != termination.deadline_kill_answer.has_value()) {
        reader.fail("deadline_kill_answer", "must be set exactly when deadline_kill_sent is true");
    }
    termination.engine_lifetime_s = reader.optional_number("engine_lifetime_s");
    termination.program_end = read_process_end(reader, "program_end");
    termination.box_end = read_process_end(reader, "box_end");
}

// The descriptions are text for people (any string); engine_offset_ns is the measurement.
std::vector<Phase> read_phases(util::ObjectReader& reader)
{
    std::vector<Phase> phases;
    for (auto& phase_reader : reader.objects("phases")) {
        Phase phase;
        phase.name = phase_reader.string("name");
        phase.started_s = phase_reader.number("started_s");
        phase.duration_s = phase_reader.number("duration_s");
        phase.outcome = phase_reader.string("outcome");
        phase_reader.finish();
        phases.push_back(std::move(phase));
    }
    return phases;
}

ClockDomains read_clock_domains(util::ObjectReader& reader)
{
    ClockDomains domains;
    // The engine's clocks as its backend names them (an unsealed run's receipt has none).
    for (auto [key, text] : {std::pair{"observed.engine_state", &domains.engine_clocks.engine_state},
                             std::pair{"observed.termination.engine_lifetime_s", &domains.engine_clocks.engine_lifetime}})
        if (const auto* value = reader.if_present(key); value != nullptr && value->is_string())
            *text = std::string(value->get_string());
    if (reader.mode() == util::ReadMode::strict) {
        for (const auto& key : reader.keys()) {
            if (key != "engine_offset_ns") {
                reader.string(key);
            }
        }
    }
    if (reader.any("engine_offset_ns").is_null()) {
        return domains;
    }
    auto offset = reader.object("engine_offset_ns");
    ClockOffset measured{offset.int64("min"), offset.int64("max")};
    offset.string("source");
    offset.finish();
    if (measured.min_ns > measured.max_ns) {
        reader.fail("engine_offset_ns", "must have min <= max");
    }
    domains.engine_offset = measured;
    return domains;
}

std::vector<FileRecord> read_file_records(util::ObjectReader& files, std::string_view key)
{
    std::vector<FileRecord> records;
    for (auto& item : files.objects(key)) {
        FileRecord record;
        record.name = item.string("name");
        record.bytes = item.uint64("bytes");
        record.sha256 = item.string("sha256");
        item.finish();
        records.push_back(std::move(record));
    }
    return records;
}

FilesRecord read_files(util::ObjectReader& files)
{
    FilesRecord record;
    record.source = files.string("source");
    record.working_folder = files.string("working_folder");
    record.output_folder = files.string("output_folder");
    record.inputs = read_file_records(files, "inputs");
    record.outputs = read_file_records(files, "outputs");
    for (auto& item : files.objects("skipped")) {
        record.skipped.push_back(SkippedFile{item.string("name"), item.string("reason")});
        item.finish();
    }
    record.skipped_unlisted = files.uint64("skipped_unlisted");
    record.errors = files.strings("errors");
    return record;
}

// The value at a dotted path, or nullptr when a step is missing or not an object.
template <class Value>
Value* at_path(Value& root, std::string_view path)
{
    Value* value = &root;
    for (;;) {
        auto* object = value->if_object();
        if (object == nullptr) return nullptr;
        const auto dot = path.find('.');
        value = object->if_contains(path.substr(0, dot));
        if (value == nullptr || dot == std::string_view::npos) return value;
        path.remove_prefix(dot + 1);
    }
}

const json::value& sealed_defaults()
{
    static const json::value defaults = receipt_to_json(Receipt{});
    return defaults;
}

// An unsealed run's document: checks that every sealed-only field is null and named in
// not_applicable (nothing else is), then fills those fields with a sealed receipt's defaults, so
// that the typed reading below stays one path. The filled values mean nothing: Receipt::sealed()
// is false.
Expected<json::value> fill_not_applicable(const json::value& document, util::ReadMode mode)
{
    const auto invalid = [](const std::string& why) {
        return make_error(api_error::k_invalid_receipt, "The receipt is not valid: " + why + ".");
    };
    json::value filled = document;
    const auto* named = document.as_object().if_contains("not_applicable");
    if (named == nullptr || !named->is_object()) return invalid("not_applicable: must be an object");
    std::size_t named_fields = 0;
    for (const auto& field : sealed_only_fields()) {
        auto* value = at_path(filled, field.path);
        if (value == nullptr && field.may_be_absent && !named->as_object().contains(field.path)) continue;
        ++named_fields;
        if (value == nullptr || !value->is_null())
            return invalid(std::string(field.path) + ": must be null in an unsealed run's receipt");
        const auto* reason = named->as_object().if_contains(field.path);
        if (reason == nullptr || !reason->is_string())
            return invalid("not_applicable: must name " + std::string(field.path) + " with a reason");
        *value = *at_path(sealed_defaults(), field.path);
    }
    if (mode == util::ReadMode::strict && named->as_object().size() != named_fields)
        return invalid("not_applicable: must name exactly the sealed-only fields");
    return filled;
}

UnsealedFacts read_unsealed(util::ObjectReader& reader)
{
    UnsealedFacts facts;
    facts.python = reader.string("python");
    facts.working_folder = reader.string("working_folder");
    facts.working_folder_removed = reader.boolean("working_folder_removed");
    facts.environment = reader.strings("environment");
    auto limits = reader.object("limits");
    facts.limits.address_space_bytes = limits.int64("address_space_bytes");
    facts.limits.processes = limits.int64("processes");
    facts.limits.user_processes_at_start = limits.int64("user_processes_at_start");
    facts.limits.cpu_seconds = limits.int64("cpu_seconds");
    facts.limits.file_size_bytes = limits.int64("file_size_bytes");
    facts.limits.open_files = limits.int64("open_files");
    facts.limits.core_bytes = limits.int64("core_bytes");
    limits.finish();
    facts.group_killed_after_exit = reader.boolean("group_killed_after_exit");
    return facts;
}

bool is_seed_unknown_key(std::string_view key)
{
    return std::find(k_seed_unknown_keys.begin(), k_seed_unknown_keys.end(), key) != k_seed_unknown_keys.end();
}

// `unknown` ({key: boolean}) and `unknown_reasons` ({key: reason}, one per true key) into
// Receipt::unknown (key -> reason). Receipts before unknown_reasons wrote `unknown` as
// {key: reason}: the tolerant reader still reads them (`pybox receipts show` of a receipt kept
// before the change), the strict reader only the form this build writes.
void read_unknown(util::ObjectReader& root, Receipt& receipt)
{
    const bool strict = root.mode() == util::ReadMode::strict;
    auto unknown = root.object("unknown");
    if (!strict && root.if_present("unknown_reasons") == nullptr) {
        for (const auto& key : unknown.keys()) receipt.unknown[key] = unknown.string(key);
        unknown.finish();
        return;
    }
    auto reasons = root.object("unknown_reasons");
    if (strict)
        for (const auto key : k_seed_unknown_keys) unknown.boolean(key);  // refuses a missing one
    std::vector<std::string> true_keys;
    for (const auto& key : unknown.keys()) {
        if (unknown.boolean(key)) {
            true_keys.push_back(key);
        } else if (strict && !is_seed_unknown_key(key)) {
            unknown.fail(key, "must be true or absent (only the seed's three keys are written as false)");
        }
    }
    for (const auto& key : reasons.keys()) {
        const auto reason = reasons.string(key);
        if (std::find(true_keys.begin(), true_keys.end(), key) != true_keys.end()) {
            receipt.unknown[key] = reason;
        } else if (strict) {
            reasons.fail(key, "has a reason, but unknown." + key + " is not true");
        }
    }
    for (const auto& key : true_keys) {
        if (receipt.unknown.contains(key)) continue;
        if (strict) {
            unknown.fail(key, "is true, but unknown_reasons gives no reason for it");
        } else {
            receipt.unknown[key] = "no reason given";
        }
    }
    reasons.finish();
    unknown.finish();
}

}  // namespace

Expected<Receipt> receipt_from_json(const json::value& original, util::ReadMode mode)
{
    // Whether the run was sealed decides how its other fields read (docs/receipt.md "sealed").
    bool sealed = true;
    const auto* top = original.if_object();
    if (const auto* flag = top != nullptr ? top->if_contains("sealed") : nullptr; flag != nullptr) {
        if (!flag->is_bool()) return make_error(api_error::k_invalid_receipt, "The receipt is not valid: sealed: must be a boolean.");
        sealed = flag->get_bool();
    }
    json::value filled;
    if (!sealed) {
        auto checked = fill_not_applicable(original, mode);
        if (!checked) return checked.error();
        filled = std::move(*checked);
    }
    const json::value& document = sealed ? original : filled;

    std::string error;
    Receipt receipt;
    util::ObjectReader root(document, "", error, mode);

    const auto& version = root.any("schema_version");
    if (!version.is_int64() || version.get_int64() != k_receipt_schema_version) {
        root.fail("schema_version", "must be " + std::to_string(k_receipt_schema_version));
    }

    // Absent from receipts of daemons before unsealed runs: all sealed.
    if (root.if_present("sealed") != nullptr || root.if_present("isolation") != nullptr) {
        root.boolean("sealed");
        if (root.string("isolation") != (sealed ? "container" : "none"))
            root.fail("isolation", sealed ? "must be \"container\" in a sealed run's receipt"
                                          : "must be \"none\" in an unsealed run's receipt");
    }
    if (root.if_present("not_applicable") != nullptr) {
        auto named = root.object("not_applicable");
        if (named.mode() == util::ReadMode::strict) {
            for (const auto& key : named.keys()) named.string(key);
            if (sealed && !named.keys().empty()) root.fail("not_applicable", "must be empty in a sealed run's receipt");
        }
        named.finish();
    }
    if (const auto* unsealed = root.if_present("unsealed"); unsealed != nullptr && !unsealed->is_null()) {
        auto facts = root.object("unsealed");
        if (sealed) {
            root.fail("unsealed", "must be null in a sealed run's receipt");
        } else {
            receipt.m_unsealed = read_unsealed(facts);
        }
        facts.finish();
    } else if (!sealed) {
        root.fail("unsealed", "must be an object in an unsealed run's receipt");
    }

    auto identity = root.object("identity");
    receipt.identity.run_id = identity.string("run_id");
    receipt.identity.installation_id = identity.string("installation_id");
    receipt.identity.image = identity.string("image");
    receipt.identity.image_id = identity.string("image_id");
    receipt.identity.recipe_sha256 = identity.string("recipe_sha256");
    receipt.identity.created_at = identity.string("created_at");
    receipt.identity.expires_at = identity.int64("expires_at");
    if (identity.if_present("daemon_version") != nullptr)
        receipt.identity.daemon_version = identity.string("daemon_version");
    identity.finish();

    if (const auto* engine = root.if_present("engine"); engine != nullptr && !engine->is_null()) {
        auto engine_reader = root.object("engine");
        receipt.engine = EngineRef{engine_reader.string("id"), engine_reader.string("address")};
        engine_reader.finish();
    }

    receipt.container_id = root.optional_string("container_id").value_or("");
    if (root.any("container_id").is_string() && receipt.container_id.empty()) {
        root.fail("container_id", "must be null when no box was created, not empty");
    }

    auto submission = root.object("submission");
    receipt.source_sha256 = submission.string("source_sha256");
    receipt.source_bytes = submission.uint64("source_bytes");
    submission.finish();

    auto configured = root.object("configured");
    receipt.configured.wall_timeout_s = configured.number("wall_timeout_s");
    receipt.configured.guest_timer_s = configured.number("guest_timer_s");
    receipt.configured.output_limit_bytes = configured.int64("output_limit_bytes");
    receipt.configured.policy = read_policy(configured);
    receipt.configured.command = configured.strings("command");
    receipt.configured.files_helper_sha256 = configured.optional_string("files_helper_sha256");
    configured.finish();

    auto observed = root.object("observed");
    receipt.observed.policy_verified_before_start = observed.boolean("policy_verified_before_start");
    receipt.observed.effective_policy = observed.kept("effective_policy");
    receipt.observed.engine_state = observed.kept("engine_state");
    receipt.observed.resources = observed.kept("resources");
    auto termination = observed.object("termination");
    read_termination(termination, receipt);
    termination.finish();
    // Absent from receipts of daemons before it.
    if (const auto* environment = observed.if_present("environment"); environment != nullptr && !environment->is_null()) {
        auto environment_reader = observed.object("environment");
        receipt.observed.environment =
            EnvironmentRecord{environment_reader.string("source"), environment_reader.strings("beyond_spec")};
        environment_reader.finish();
    }
    observed.finish();

    auto capture = root.object("capture");
    receipt.capture.stdout_stream = read_stream(capture, "stdout");
    receipt.capture.stderr_stream = read_stream(capture, "stderr");
    receipt.capture.output_complete = capture.boolean("output_complete");
    receipt.capture.stream_error = capture.optional_string("stream_error");
    if (capture.int64("output_limit_bytes") != receipt.configured.output_limit_bytes) {
        capture.fail("output_limit_bytes", "must equal configured.output_limit_bytes");
    }
    receipt.capture.provenance = capture.string("provenance");
    capture.finish();

    auto lifecycle = root.object("lifecycle");
    // A daemon older than warm boxes sends none of warm, box_started_at and preparation.
    const bool has_warm = lifecycle.mode() == util::ReadMode::strict || lifecycle.if_present("warm") != nullptr;
    if (has_warm) {
        receipt.lifecycle.warm = lifecycle.boolean("warm");
        receipt.lifecycle.box_started_at = lifecycle.optional_string("box_started_at");
    }
    if (has_warm && !lifecycle.any("preparation").is_null()) {
        auto preparation_reader = lifecycle.object("preparation");
        Preparation preparation;
        preparation.phases = read_phases(preparation_reader);
        preparation.total_s = preparation_reader.number("total_s");
        preparation.waited_s = preparation_reader.number("waited_s");
        preparation_reader.finish();
        receipt.lifecycle.preparation = std::move(preparation);
    }
    if (lifecycle.mode() == util::ReadMode::strict && receipt.lifecycle.warm != receipt.lifecycle.preparation.has_value())
        lifecycle.fail("preparation", "must be an object exactly when warm is true");
    receipt.lifecycle.last_phase = lifecycle.string("last_phase");
    receipt.lifecycle.cancelled = lifecycle.boolean("cancelled");
    receipt.lifecycle.timeouts = lifecycle.strings("timeouts");
    receipt.lifecycle.phases = read_phases(lifecycle);
    auto timing = lifecycle.object("timing");
    receipt.lifecycle.queued_s = timing.number("queued_s");
    receipt.lifecycle.total_s = timing.number("total_s");
    timing.finish();
    lifecycle.finish();

    auto cleanup = root.object("cleanup");
    receipt.cleanup.status = required_name(cleanup, "status", &cleanup_from_string, receipt);
    receipt.cleanup.removed = cleanup.boolean("removed");
    receipt.cleanup.attempts = cleanup.small_int("attempts");
    receipt.cleanup.error = cleanup.optional_string("error");
    receipt.cleanup.reconciliation = cleanup.kept("reconciliation");
    cleanup.finish();

    auto clock_domains = root.object("clock_domains");
    receipt.clock_domains = read_clock_domains(clock_domains);
    clock_domains.finish();

    read_unknown(root, receipt);

    if (!root.any("files").is_null()) {
        auto files = root.object("files");
        receipt.files = read_files(files);
        files.finish();
    }

    for (auto& explanation_reader : root.objects("explanations")) {
        Explanation explanation;
        explanation.code = explanation_reader.string("code");
        explanation.message = explanation_reader.string("message");
        const auto& evidence = explanation_reader.kept("evidence");
        if (evidence.is_object()) {
            explanation.evidence = evidence.get_object();
        } else {
            explanation_reader.fail("evidence", "must be an object");
        }
        explanation_reader.finish();
        receipt.explanations.push_back(std::move(explanation));
    }
    // The installation's signature (receipt_signature.hpp) is `pybox verify`'s to check; a
    // receipt reads the same with or without it.
    root.if_present("signature");
    root.finish();

    if (!error.empty()) {
        return make_error(api_error::k_invalid_receipt, "The receipt is not valid: " + util::printable_excerpt(error, 200) + ".");
    }
    return receipt;
}

}  // namespace pybox::proto
