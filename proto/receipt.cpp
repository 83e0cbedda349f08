#include "proto/receipt.hpp"

#include "proto/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/string.hpp>

#include <array>
#include <limits>
#include <set>
#include <utility>

namespace pybox::proto {

namespace json = boost::json;

namespace {

constexpr std::string_view k_capture_provenance =
    "target byte streams via bounded Docker attach; untrusted content";
constexpr std::string_view k_encoding_utf8 = "utf-8";
constexpr std::string_view k_encoding_base64 = "base64";

constexpr std::array<std::pair<TerminationMechanism, std::string_view>, 6> k_mechanism_names{{
    {TerminationMechanism::target_exit_observed, "TARGET_EXIT_OBSERVED"},
    {TerminationMechanism::deadline_kill, "DEADLINE_KILL"},
    {TerminationMechanism::cause_not_established, "CAUSE_NOT_ESTABLISHED"},
    {TerminationMechanism::out_of_memory, "OUT_OF_MEMORY"},
    {TerminationMechanism::not_started, "NOT_STARTED"},
    {TerminationMechanism::engine_lost, "ENGINE_LOST"},
}};

constexpr std::array<std::pair<CleanupStatus, std::string_view>, 3> k_cleanup_names{{
    {CleanupStatus::removed, "REMOVED"},
    {CleanupStatus::not_created, "NOT_CREATED"},
    {CleanupStatus::removal_unconfirmed, "REMOVAL_UNCONFIRMED"},
}};

json::object clock_domains()
{
    return {
        {"lifecycle", "host monotonic clock: seconds from the start of the run (lifecycle.phases, "
                      "lifecycle.timing)"},
        {"identity.created_at", "host wall clock, UTC"},
        {"identity.expires_at", "host wall clock, unix seconds"},
        {"observed.engine_state", "the engine's clock (StartedAt, FinishedAt); not aligned with the "
                                  "host's clocks"},
        {"observed.termination.engine_lifetime_s", "the engine's clock (FinishedAt - StartedAt); not "
                                                   "aligned with the host's clocks"},
    };
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
    const bool utf8 = is_valid_utf8(stream.bytes);
    const std::uint64_t kept = stream.bytes.size();
    capture[name] = utf8 ? stream.bytes : base64_encode(stream.bytes);
    capture[name + "_encoding"] = utf8 ? k_encoding_utf8 : k_encoding_base64;
    capture[name + "_bytes"] = stream.total_bytes;
    capture[name + "_bytes_kept"] = kept;
    capture[name + "_bytes_dropped"] = stream.total_bytes > kept ? stream.total_bytes - kept : 0;
    capture[name + "_truncated"] = stream.truncated();
}

// Reads one JSON object strictly. The first problem found anywhere is kept in the shared
// error string (as "path: problem"); after a problem, readers return defaults.
class ObjectReader {
public:
    ObjectReader(const json::value& value, std::string path, std::string& error)
        : m_path(std::move(path)), m_error(error)
    {
        if (value.is_object()) {
            m_object = &value.get_object();
        } else {
            fail("", "must be an object");
        }
    }

    // Refuses keys that were never read.
    void finish()
    {
        if (m_object == nullptr || m_used == m_object->size()) {
            return;
        }
        for (const auto& [key, value] : *m_object) {
            if (!m_read.contains(std::string(key))) {
                fail(key, "is not a receipt field");
                return;
            }
        }
    }

    std::vector<std::string> keys() const
    {
        std::vector<std::string> result;
        if (m_object != nullptr) {
            for (const auto& [key, value] : *m_object) {
                result.emplace_back(key);
            }
        }
        return result;
    }

    const json::value& any(std::string_view key)
    {
        static const json::value null_value;
        if (m_object == nullptr) {
            return null_value;
        }
        const auto* found = m_object->if_contains(key);
        if (found == nullptr) {
            fail(key, "is missing");
            return null_value;
        }
        if (m_read.insert(std::string(key)).second) {
            ++m_used;
        }
        return *found;
    }

    ObjectReader object(std::string_view key) { return ObjectReader(any(key), child_path(key), m_error); }

    const json::array& array(std::string_view key)
    {
        static const json::array empty;
        const auto& value = any(key);
        if (value.is_array()) {
            return value.get_array();
        }
        expect(key, "an array");
        return empty;
    }

    std::string string(std::string_view key)
    {
        const auto& value = any(key);
        if (value.is_string()) {
            return std::string(value.get_string());
        }
        expect(key, "a string");
        return {};
    }

    std::optional<std::string> optional_string(std::string_view key)
    {
        const auto& value = any(key);
        if (value.is_null()) {
            return std::nullopt;
        }
        if (value.is_string()) {
            return std::string(value.get_string());
        }
        expect(key, "a string or null");
        return std::nullopt;
    }

    bool boolean(std::string_view key)
    {
        const auto& value = any(key);
        if (value.is_bool()) {
            return value.get_bool();
        }
        expect(key, "true or false");
        return false;
    }

    std::int64_t int64(std::string_view key) { return optional_int64(key, false).value_or(0); }

    std::optional<std::int64_t> optional_int64(std::string_view key, bool null_allowed = true)
    {
        const auto& value = any(key);
        if (null_allowed && value.is_null()) {
            return std::nullopt;
        }
        if (value.is_int64()) {
            return value.get_int64();
        }
        if (value.is_uint64() && value.get_uint64() <= std::numeric_limits<std::int64_t>::max()) {
            return static_cast<std::int64_t>(value.get_uint64());
        }
        expect(key, null_allowed ? "an integer or null" : "an integer");
        return std::nullopt;
    }

    std::uint64_t uint64(std::string_view key)
    {
        const auto& value = any(key);
        if (value.is_uint64()) {
            return value.get_uint64();
        }
        if (value.is_int64() && value.get_int64() >= 0) {
            return static_cast<std::uint64_t>(value.get_int64());
        }
        expect(key, "a non-negative integer");
        return 0;
    }

    int small_int(std::string_view key, std::optional<int>* optional = nullptr)
    {
        const auto value = optional_int64(key, optional != nullptr);
        if (value && (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max())) {
            fail(key, "is out of range");
            return 0;
        }
        if (optional != nullptr && value) {
            *optional = static_cast<int>(*value);
        }
        return static_cast<int>(value.value_or(0));
    }

    std::optional<double> optional_number(std::string_view key, bool null_allowed = true)
    {
        const auto& value = any(key);
        if (null_allowed && value.is_null()) {
            return std::nullopt;
        }
        if (value.is_number()) {
            json::error_code ec;
            const double number = value.to_number<double>(ec);
            if (!ec) {
                return number;
            }
        }
        expect(key, null_allowed ? "a number or null" : "a number");
        return std::nullopt;
    }

    double number(std::string_view key) { return optional_number(key, false).value_or(0); }

    std::vector<std::string> strings(std::string_view key)
    {
        std::vector<std::string> result;
        const auto& items = array(key);
        for (const auto& item : items) {
            if (!item.is_string()) {
                fail(key, "must hold only strings");
                return {};
            }
            result.emplace_back(item.get_string());
        }
        return result;
    }

    void fail(std::string_view key, std::string_view problem)
    {
        if (m_error.empty()) {
            const std::string where = key.empty() ? m_path : child_path(key);
            m_error = (where.empty() ? std::string("the document") : where) + " " + std::string(problem);
        }
    }

    std::string child_path(std::string_view key) const
    {
        return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
    }

private:
    void expect(std::string_view key, std::string_view what) { fail(key, "must be " + std::string(what)); }

    const json::object* m_object = nullptr;
    std::string m_path;
    std::string& m_error;
    std::set<std::string> m_read;
    std::size_t m_used = 0;
};

StreamRecord read_stream(ObjectReader& capture, const std::string& name)
{
    StreamRecord stream;
    const std::string text = capture.string(name);
    const std::string encoding = capture.string(name + "_encoding");
    if (encoding == k_encoding_utf8) {
        if (!is_valid_utf8(text)) {
            capture.fail(name, "is not valid UTF-8");
        }
        stream.bytes = text;
    } else if (encoding == k_encoding_base64) {
        auto decoded = base64_decode(text);
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

BoxPolicy read_policy(ObjectReader& configured)
{
    BoxPolicy policy;
    policy.memory_bytes = configured.int64("memory_bytes");
    if (configured.int64("memory_swap_bytes") != policy.memory_bytes) {
        configured.fail("memory_swap_bytes", "must equal memory_bytes (no swap)");
    }
    policy.pids = configured.int64("pids");
    configured.number("cpu_cores");  // derived from nano_cpus
    policy.nano_cpus = configured.int64("nano_cpus");
    policy.network = configured.string("network");
    policy.user = configured.string("user");
    policy.readonly_root = configured.boolean("readonly_root");
    auto tmpfs = configured.object("tmpfs");
    policy.tmpfs_path = tmpfs.string("path");
    policy.tmpfs_bytes = tmpfs.int64("bytes");
    policy.tmpfs_options = tmpfs.string("options");
    tmpfs.finish();
    policy.open_files = configured.int64("open_files");
    policy.log_driver = configured.string("log_driver");
    policy.no_new_privileges = configured.boolean("no_new_privileges");
    policy.capabilities_dropped = configured.string("capabilities_dropped");
    policy.seccomp = configured.string("seccomp");
    return policy;
}

}  // namespace

std::string_view to_string(TerminationMechanism mechanism)
{
    for (const auto& [value, name] : k_mechanism_names) {
        if (value == mechanism) {
            return name;
        }
    }
    return "UNKNOWN";
}

std::optional<TerminationMechanism> termination_from_string(std::string_view text)
{
    for (const auto& [value, name] : k_mechanism_names) {
        if (name == text) {
            return value;
        }
    }
    return std::nullopt;
}

std::string_view to_string(CleanupStatus status)
{
    for (const auto& [value, name] : k_cleanup_names) {
        if (value == status) {
            return name;
        }
    }
    return "UNKNOWN";
}

std::optional<CleanupStatus> cleanup_from_string(std::string_view text)
{
    for (const auto& [value, name] : k_cleanup_names) {
        if (name == text) {
            return value;
        }
    }
    return std::nullopt;
}

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
    capture_json["provenance"] = k_capture_provenance;

    json::array phases;
    for (const auto& phase : lifecycle.phases) {
        phases.push_back(json::object{{"name", phase.name},
                                      {"started_s", phase.started_s},
                                      {"duration_s", phase.duration_s},
                                      {"outcome", phase.outcome}});
    }
    json::object unknown;
    for (const auto& [key, reason] : receipt.unknown) {
        unknown[key] = reason;
    }
    json::array explanations;
    for (const auto& explanation : receipt.explanations) {
        explanations.push_back(json::object{{"code", explanation.code},
                                            {"message", explanation.message},
                                            {"evidence", explanation.evidence}});
    }

    return json::object{
        {"schema_version", k_receipt_schema_version},
        {"identity", json::object{{"run_id", identity.run_id},
                                  {"installation_id", identity.installation_id},
                                  {"image", identity.image},
                                  {"image_id", identity.image_id},
                                  {"recipe_sha256", identity.recipe_sha256},
                                  {"created_at", identity.created_at},
                                  {"expires_at", identity.expires_at}}},
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
                                    {"nano_cpus", policy.nano_cpus},
                                    {"network", policy.network},
                                    {"user", policy.user},
                                    {"readonly_root", policy.readonly_root},
                                    {"tmpfs", json::object{{"path", policy.tmpfs_path},
                                                           {"bytes", policy.tmpfs_bytes},
                                                           {"options", policy.tmpfs_options}}},
                                    {"open_files", policy.open_files},
                                    {"log_driver", policy.log_driver},
                                    {"no_new_privileges", policy.no_new_privileges},
                                    {"capabilities_dropped", policy.capabilities_dropped},
                                    {"seccomp", policy.seccomp},
                                    {"command", strings_to_json(configured.command)}}},
        {"observed",
         json::object{{"policy_verified_before_start", observed.policy_verified_before_start},
                      {"effective_policy", observed.effective_policy},
                      {"engine_state", observed.engine_state},
                      {"resources", observed.resources},
                      {"termination", json::object{{"mechanism", to_string(termination.mechanism)},
                                                   {"exit_code", optional_to_json(termination.exit_code)},
                                                   {"signal", optional_to_json(termination.signal)},
                                                   {"deadline_kill_sent", termination.deadline_kill_sent},
                                                   {"engine_lifetime_s",
                                                    optional_to_json(termination.engine_lifetime_s)}}}}},
        {"capture", std::move(capture_json)},
        {"lifecycle", json::object{{"last_phase", lifecycle.last_phase},
                                   {"cancelled", lifecycle.cancelled},
                                   {"timeouts", strings_to_json(lifecycle.timeouts)},
                                   {"phases", std::move(phases)},
                                   {"timing", json::object{{"total_s", lifecycle.total_s}}}}},
        {"cleanup", json::object{{"status", to_string(cleanup.status)},
                                 {"removed", cleanup.removed},
                                 {"attempts", cleanup.attempts},
                                 {"error", optional_to_json(cleanup.error)},
                                 {"reconciliation", cleanup.reconciliation}}},
        {"clock_domains", clock_domains()},
        {"unknown", std::move(unknown)},
        {"files", nullptr},
        {"explanations", std::move(explanations)},
    };
}

Expected<Receipt> receipt_from_json(const json::value& document)
{
    std::string error;
    Receipt receipt;
    ObjectReader root(document, "", error);

    const auto& version = root.any("schema_version");
    if (!version.is_int64() || version.get_int64() != k_receipt_schema_version) {
        root.fail("schema_version", "must be " + std::to_string(k_receipt_schema_version));
    }

    auto identity = root.object("identity");
    receipt.identity.run_id = identity.string("run_id");
    receipt.identity.installation_id = identity.string("installation_id");
    receipt.identity.image = identity.string("image");
    receipt.identity.image_id = identity.string("image_id");
    receipt.identity.recipe_sha256 = identity.string("recipe_sha256");
    receipt.identity.created_at = identity.string("created_at");
    receipt.identity.expires_at = identity.int64("expires_at");
    identity.finish();

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
    configured.finish();

    auto observed = root.object("observed");
    receipt.observed.policy_verified_before_start = observed.boolean("policy_verified_before_start");
    receipt.observed.effective_policy = observed.any("effective_policy");
    receipt.observed.engine_state = observed.any("engine_state");
    receipt.observed.resources = observed.any("resources");
    auto termination = observed.object("termination");
    const auto mechanism = termination_from_string(termination.string("mechanism"));
    if (mechanism) {
        receipt.observed.termination.mechanism = *mechanism;
    } else {
        termination.fail("mechanism", "is not a known termination mechanism");
    }
    receipt.observed.termination.exit_code = termination.optional_int64("exit_code");
    termination.small_int("signal", &receipt.observed.termination.signal);
    receipt.observed.termination.deadline_kill_sent = termination.boolean("deadline_kill_sent");
    receipt.observed.termination.engine_lifetime_s = termination.optional_number("engine_lifetime_s");
    termination.finish();
    observed.finish();

    auto capture = root.object("capture");
    receipt.capture.stdout_stream = read_stream(capture, "stdout");
    receipt.capture.stderr_stream = read_stream(capture, "stderr");
    receipt.capture.output_complete = capture.boolean("output_complete");
    receipt.capture.stream_error = capture.optional_string("stream_error");
    if (capture.int64("output_limit_bytes") != receipt.configured.output_limit_bytes) {
        capture.fail("output_limit_bytes", "must equal configured.output_limit_bytes");
    }
    capture.string("provenance");
    capture.finish();

    auto lifecycle = root.object("lifecycle");
    receipt.lifecycle.last_phase = lifecycle.string("last_phase");
    receipt.lifecycle.cancelled = lifecycle.boolean("cancelled");
    receipt.lifecycle.timeouts = lifecycle.strings("timeouts");
    const auto& phases = lifecycle.array("phases");
    for (std::size_t i = 0; i < phases.size(); ++i) {
        ObjectReader phase_reader(phases[i], "lifecycle.phases[" + std::to_string(i) + "]", error);
        Phase phase;
        phase.name = phase_reader.string("name");
        phase.started_s = phase_reader.number("started_s");
        phase.duration_s = phase_reader.number("duration_s");
        phase.outcome = phase_reader.string("outcome");
        phase_reader.finish();
        receipt.lifecycle.phases.push_back(std::move(phase));
    }
    auto timing = lifecycle.object("timing");
    receipt.lifecycle.total_s = timing.number("total_s");
    timing.finish();
    lifecycle.finish();

    auto cleanup = root.object("cleanup");
    const auto status = cleanup_from_string(cleanup.string("status"));
    if (status) {
        receipt.cleanup.status = *status;
    } else {
        cleanup.fail("status", "is not a known cleanup status");
    }
    receipt.cleanup.removed = cleanup.boolean("removed");
    receipt.cleanup.attempts = cleanup.small_int("attempts");
    receipt.cleanup.error = cleanup.optional_string("error");
    receipt.cleanup.reconciliation = cleanup.any("reconciliation");
    cleanup.finish();

    root.object("clock_domains");

    auto unknown = root.object("unknown");
    for (const auto& key : unknown.keys()) {
        receipt.unknown[key] = unknown.string(key);
    }
    unknown.finish();

    if (!root.any("files").is_null()) {
        root.fail("files", "must be null");
    }

    const auto& explanations = root.array("explanations");
    for (std::size_t i = 0; i < explanations.size(); ++i) {
        const std::string path = "explanations[" + std::to_string(i) + "]";
        ObjectReader explanation_reader(explanations[i], path, error);
        Explanation explanation;
        explanation.code = explanation_reader.string("code");
        explanation.message = explanation_reader.string("message");
        const auto& evidence = explanation_reader.any("evidence");
        if (evidence.is_object()) {
            explanation.evidence = evidence.get_object();
        } else {
            explanation_reader.fail("evidence", "must be an object");
        }
        explanation_reader.finish();
        receipt.explanations.push_back(std::move(explanation));
    }
    root.finish();

    if (!error.empty()) {
        return make_error("invalid_receipt", "The receipt is not valid: " + printable_excerpt(error, 200) + ".");
    }
    return receipt;
}

int exit_code_for(const Receipt& receipt)
{
    constexpr int k_deadline = 124;
    constexpr int k_could_not_run = 125;
    constexpr int k_out_of_memory = 137;
    const auto& termination = receipt.observed.termination;
    switch (termination.mechanism) {
    case TerminationMechanism::target_exit_observed:
        if (termination.exit_code && *termination.exit_code >= 0 && *termination.exit_code <= 255) {
            return static_cast<int>(*termination.exit_code);
        }
        return k_could_not_run;
    case TerminationMechanism::deadline_kill:
    case TerminationMechanism::cause_not_established:
        return k_deadline;
    case TerminationMechanism::out_of_memory:
        return k_out_of_memory;
    case TerminationMechanism::not_started:
    case TerminationMechanism::engine_lost:
        return k_could_not_run;
    }
    return k_could_not_run;
}

}  // namespace pybox::proto
