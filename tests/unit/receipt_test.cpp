#include "proto/receipt.hpp"
#include "tests/support/sample_receipt.hpp"
#include "util/text.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <set>

using namespace pybox::proto;
using namespace pybox::util;
using pybox::test::sample_receipt;
using namespace std::string_literals;
namespace json = boost::json;

namespace {

std::set<std::string> keys_of(const json::value& value)
{
    std::set<std::string> keys;
    for (const auto& [key, item] : value.as_object()) {
        keys.emplace(key);
    }
    return keys;
}

// Serializes to text and back, as the wire and the client do.
pybox::Expected<Receipt> through_text(const Receipt& receipt)
{
    return receipt_from_json(json::parse(json::serialize(receipt_to_json(receipt))));
}

std::string from_json_error(const json::value& document)
{
    const auto parsed = receipt_from_json(document);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "invalid_receipt");
    return parsed.error().message;
}

}  // namespace

TEST_CASE("The receipt has exactly the top-level keys of the layout")
{
    const auto document = receipt_to_json(sample_receipt());
    CHECK(keys_of(document) == std::set<std::string>{"schema_version", "sealed", "isolation", "identity", "engine",
                                                     "container_id", "submission", "configured", "observed",
                                                     "capture", "lifecycle", "cleanup", "clock_domains", "unknown", "unknown_reasons",
                                                     "not_applicable", "files", "unsealed", "explanations"});
    CHECK(document.at("schema_version") == 1);
    CHECK(document.at("files").is_null());
}

TEST_CASE("The nested sections have exactly their documented keys")
{
    const auto document = receipt_to_json(sample_receipt());
    CHECK(keys_of(document.at("submission")) == std::set<std::string>{"source_sha256", "source_bytes"});
    CHECK(keys_of(document.at("configured")) ==
          std::set<std::string>{"wall_timeout_s", "guest_timer_s", "output_limit_bytes", "memory_bytes",
                                "memory_swap_bytes", "pids", "cpu_cores", "nano_cpus", "network", "user",
                                "readonly_root", "tmpfs", "open_files", "core_dump_bytes", "log_driver",
                                "no_new_privileges", "capabilities_dropped", "seccomp", "seccomp_sha256",
                                "command", "files_helper_sha256"});
    CHECK(keys_of(document.at("configured").at("tmpfs")) == std::set<std::string>{"path", "bytes", "options"});
    CHECK(keys_of(document.at("observed")) ==
          std::set<std::string>{"policy_verified_before_start", "effective_policy", "engine_state", "resources",
                                "termination", "environment"});
    CHECK(keys_of(document.at("observed").at("termination")) ==
          std::set<std::string>{"mechanism", "exit_code", "signal", "signal_source", "inferred_signal",
                                "deadline_kill_sent", "deadline_kill_answer", "deadline_kill_sent_at",
                                "engine_lifetime_s", "program_end", "box_end"});
    CHECK(keys_of(document.at("capture")) ==
          std::set<std::string>{"stdout", "stdout_encoding", "stdout_bytes", "stdout_bytes_kept",
                                "stdout_bytes_dropped", "stdout_truncated", "stderr", "stderr_encoding",
                                "stderr_bytes", "stderr_bytes_kept", "stderr_bytes_dropped", "stderr_truncated",
                                "output_complete", "stream_error", "output_limit_bytes", "provenance"});
    CHECK(keys_of(document.at("lifecycle")) ==
          std::set<std::string>{"warm", "box_started_at", "preparation", "last_phase", "cancelled", "timeouts",
                                "phases", "timing"});
    CHECK(keys_of(document.at("lifecycle").at("timing")) == std::set<std::string>{"queued_s", "total_s"});
    CHECK(keys_of(document.at("cleanup")) ==
          std::set<std::string>{"status", "removed", "attempts", "error", "reconciliation"});
    CHECK(keys_of(document.at("clock_domains")) ==
          std::set<std::string>{"lifecycle", "identity.created_at", "identity.expires_at",
                                "observed.termination.deadline_kill_sent_at", "observed.engine_state",
                                "observed.termination.engine_lifetime_s", "observed.resources",
                                "lifecycle.box_started_at", "engine_offset_ns"});
}

TEST_CASE("A measured engine clock offset is written as a bracket with its source")
{
    Receipt receipt = sample_receipt();
    receipt.clock_domains.engine_offset = ClockOffset{-1'200, 35'000};
    const auto offset = receipt_to_json(receipt).at("clock_domains").at("engine_offset_ns");
    CHECK(offset.at("min") == -1'200);
    CHECK(offset.at("max") == 35'000);
    CHECK(offset.at("source").is_string());
    CHECK(receipt_to_json(sample_receipt()).at("clock_domains").at("engine_offset_ns").is_null());
}

TEST_CASE("An engine clock offset with min above max is refused")
{
    Receipt receipt = sample_receipt();
    receipt.clock_domains.engine_offset = ClockOffset{10, 5};
    CHECK(from_json_error(receipt_to_json(receipt)).find("clock_domains.engine_offset_ns") != std::string::npos);
}

TEST_CASE("A signal without its source is refused")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("observed").at("termination").as_object()["signal"] = 9;
    CHECK(from_json_error(document).find("observed.termination.signal_source") != std::string::npos);
}

TEST_CASE("Configured values mirror the policy, with swap equal to memory")
{
    const auto configured = receipt_to_json(sample_receipt()).at("configured");
    CHECK(configured.at("memory_bytes") == 134217728);
    CHECK(configured.at("memory_swap_bytes") == 134217728);
    CHECK(configured.at("cpu_cores") == 0.5);
    CHECK(configured.at("nano_cpus") == 500000000);
    CHECK(configured.at("command").as_array().size() == 9);
}

TEST_CASE("The tmpfs options and log driver are written as they always were")
{
    const auto configured = receipt_to_json(sample_receipt()).at("configured");
    CHECK(configured.at("tmpfs").at("options") == "noexec,nodev,nosuid");
    CHECK(configured.at("log_driver") == "none");
}

TEST_CASE("A cpu rate in parts of a millicore, tmpfs options out of order or another log driver are refused")
{
    auto fractional = receipt_to_json(sample_receipt());
    fractional.at("configured").as_object()["nano_cpus"] = 500'000'001;
    CHECK(from_json_error(fractional).find("configured.nano_cpus") != std::string::npos);
    auto reordered = receipt_to_json(sample_receipt());
    reordered.at("configured").at("tmpfs").as_object()["options"] = "nosuid,noexec,nodev";
    CHECK(from_json_error(reordered).find("options") != std::string::npos);
    auto logged = receipt_to_json(sample_receipt());
    logged.at("configured").as_object()["log_driver"] = "json-file";
    CHECK(from_json_error(logged).find("configured.log_driver") != std::string::npos);
}

TEST_CASE("Enums are written as upper snake case strings")
{
    const auto document = receipt_to_json(sample_receipt());
    CHECK(document.at("observed").at("termination").at("mechanism") == "TARGET_EXIT_OBSERVED");
    CHECK(document.at("cleanup").at("status") == "REMOVED");
    for (auto mechanism : {TerminationMechanism::target_exit_observed, TerminationMechanism::deadline_kill,
                           TerminationMechanism::cause_not_established, TerminationMechanism::out_of_memory,
                           TerminationMechanism::not_started, TerminationMechanism::engine_lost,
                           TerminationMechanism::stopped_on_disconnect}) {
        CHECK(termination_from_string(to_string(mechanism)) == mechanism);
    }
    for (auto status : {CleanupStatus::removed, CleanupStatus::not_created, CleanupStatus::removal_unconfirmed}) {
        CHECK(cleanup_from_string(to_string(status)) == status);
    }

    CHECK(to_string(TerminationMechanism::cause_not_established) == "CAUSE_NOT_ESTABLISHED");
    CHECK(to_string(CleanupStatus::removal_unconfirmed) == "REMOVAL_UNCONFIRMED");
    CHECK_FALSE(termination_from_string("target_exit_observed"));
}

TEST_CASE("Kill answers and signal sources are written as lower snake case strings and read back")
{
    CHECK(to_string(KillAnswer::not_running) == "not_running");
    CHECK(to_string(SignalSource::pybox_kill) == "pybox_kill");
    for (auto answer : {KillAnswer::accepted, KillAnswer::not_running, KillAnswer::failed}) {
        CHECK(kill_answer_from_string(to_string(answer)) == answer);
    }
    for (auto source : {SignalSource::pybox_kill, SignalSource::oom_kill}) {
        CHECK(signal_source_from_string(to_string(source)) == source);
    }
}

TEST_CASE("Missing optional values are written as null")
{
    Receipt receipt = sample_receipt();
    receipt.container_id.clear();
    receipt.observed.termination.exit_code.reset();
    receipt.observed.termination.engine_lifetime_s.reset();
    const auto document = receipt_to_json(receipt);
    CHECK(document.at("container_id").is_null());
    CHECK(document.at("observed").at("termination").at("exit_code").is_null());
    CHECK(document.at("observed").at("termination").at("signal").is_null());
    CHECK(document.at("observed").at("termination").at("engine_lifetime_s").is_null());
    CHECK(document.at("capture").at("stream_error").is_null());
    CHECK(document.at("cleanup").at("error").is_null());
}

TEST_CASE("A receipt survives a round trip through JSON text unchanged")
{
    const Receipt receipt = sample_receipt();
    const auto parsed = through_text(receipt);
    REQUIRE(parsed.has_value());
    CHECK(parsed->identity == receipt.identity);
    CHECK(parsed->configured == receipt.configured);
    CHECK(parsed->observed == receipt.observed);
    CHECK(parsed->capture == receipt.capture);
    CHECK(parsed->lifecycle == receipt.lifecycle);
    CHECK(parsed->cleanup == receipt.cleanup);
    CHECK(parsed->unknown == receipt.unknown);
    CHECK(parsed->explanations == receipt.explanations);
    CHECK(*parsed == receipt);
}

TEST_CASE("The engine's clocks are named as its backend names them, through a round trip")
{
    Receipt receipt = sample_receipt();
    receipt.clock_domains.engine_clocks = {"the cluster's wall clock, to the second", "its lifetime, to the second"};
    const auto domains = receipt_to_json(receipt).at("clock_domains");
    CHECK(domains.at("observed.engine_state") == "the cluster's wall clock, to the second");
    CHECK(domains.at("observed.termination.engine_lifetime_s") == "its lifetime, to the second");
    const auto parsed = through_text(receipt);
    REQUIRE(parsed.has_value());
    CHECK(parsed->clock_domains == receipt.clock_domains);
}

TEST_CASE("A receipt with every optional value set survives a round trip")
{
    Receipt receipt = sample_receipt();
    receipt.observed.termination = {TerminationMechanism::deadline_kill, 137, 9, true, 2.5};
    receipt.observed.termination.signal_source = SignalSource::pybox_kill;
    receipt.observed.termination.inferred_signal = 9;
    receipt.observed.termination.deadline_kill_answer = KillAnswer::accepted;
    receipt.observed.termination.deadline_kill_sent_at = "2026-11-29T20:00:07.021506Z";
    receipt.clock_domains.engine_offset = ClockOffset{-1'200, 35'000};
    receipt.capture.stream_error = "the attach stream broke";
    receipt.cleanup = {CleanupStatus::removal_unconfirmed, false, 2, "remove timed out", nullptr};
    receipt.lifecycle.cancelled = true;
    receipt.lifecycle.timeouts = {"run", "remove"};
    receipt.container_id.clear();
    const auto parsed = through_text(receipt);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == receipt);
}

TEST_CASE("A warm run's lifecycle keeps its preparation through a round trip")
{
    Receipt receipt = sample_receipt();
    receipt.lifecycle.warm = true;
    receipt.lifecycle.box_started_at = "2026-12-01T13:00:00.5Z";
    receipt.lifecycle.preparation =
        Preparation{{{"create", 0.0, 0.01, "ok"}, {"verify", 0.01, 0.001, "ok"}, {"start", 0.011, 0.09, "ok"}}, 0.101,
                    12.5};
    receipt.lifecycle.phases = {{"run", 0.0, 0.05, "ok"}, {"remove", 0.05, 0.005, "ok"}};
    const auto parsed = through_text(receipt);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == receipt);
    const auto document = receipt_to_json(receipt);
    CHECK(document.at("lifecycle").at("preparation").at("waited_s").as_double() == 12.5);
}

TEST_CASE("warm and preparation must agree: a preparation exactly when warm is true")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("lifecycle").as_object()["warm"] = true;
    CHECK(from_json_error(document).find("lifecycle.preparation") != std::string::npos);
    Receipt warm = sample_receipt();
    warm.lifecycle.warm = true;
    warm.lifecycle.preparation = Preparation{};
    document = receipt_to_json(warm);
    document.at("lifecycle").as_object()["warm"] = false;
    CHECK(from_json_error(document).find("lifecycle.preparation") != std::string::npos);
}

TEST_CASE("A receipt of a run that moved files keeps its files section through a round trip")
{
    Receipt receipt = sample_receipt();
    receipt.configured.files_helper_sha256 = std::string(64, 'a');
    FilesRecord files;
    files.source = "inputs: sent; the rest: the helper's report";
    files.working_folder = "/tmp/work";
    files.output_folder = "/tmp/work/out";
    files.inputs = {{"data.csv", 8, std::string(64, 'b')}};
    files.outputs = {{"plot.png", 1234, std::string(64, 'c')}};
    files.skipped = {{"link", "symlink"}};
    files.skipped_unlisted = 3;
    files.errors = {"one"};
    receipt.files = files;
    const auto document = receipt_to_json(receipt);
    CHECK(keys_of(document.at("files")) == std::set<std::string>{"source", "working_folder", "output_folder", "inputs",
                                                                 "outputs", "skipped", "skipped_unlisted", "errors"});
    const auto read = through_text(receipt);
    REQUIRE(read.has_value());
    CHECK(*read == receipt);
    CHECK(receipt_to_json(sample_receipt()).at("files").is_null());
}

TEST_CASE("UTF-8 output is written as a plain string")
{
    Receipt receipt = sample_receipt();
    receipt.capture.stdout_stream = {"h\xc3\xa9llo\n", 7};
    const auto capture = receipt_to_json(receipt).at("capture");
    CHECK(capture.at("stdout") == "h\xc3\xa9llo\n");
    CHECK(capture.at("stdout_encoding") == "utf-8");
    CHECK(capture.at("provenance") == "target byte streams via bounded Docker attach; untrusted content");
}

TEST_CASE("Output with NUL and escape bytes stays a valid UTF-8 string")
{
    Receipt receipt = sample_receipt();
    receipt.capture.stdout_stream = {"a\0b\x1b[31mred\x1b[0m"s, 15};
    const auto capture = receipt_to_json(receipt).at("capture");
    CHECK(capture.at("stdout_encoding") == "utf-8");
    const auto parsed = through_text(receipt);
    REQUIRE(parsed.has_value());
    CHECK(parsed->capture.stdout_stream.bytes == receipt.capture.stdout_stream.bytes);
}

TEST_CASE("Output that is not UTF-8 is written as base64 and read back byte for byte")
{
    Receipt receipt = sample_receipt();
    receipt.capture.stdout_stream = {"\xff\xfe\0\x1b\xc3"s, 5};
    std::string every_byte;
    for (int i = 0; i < 256; ++i) {
        every_byte += static_cast<char>(i);
    }
    receipt.capture.stderr_stream = {every_byte, 100'000};
    const auto capture = receipt_to_json(receipt).at("capture");
    CHECK(capture.at("stdout_encoding") == "base64");
    CHECK(capture.at("stdout") == "//4AG8M=");
    CHECK(capture.at("stderr_encoding") == "base64");
    CHECK(capture.at("stderr_bytes") == 100000);
    CHECK(capture.at("stderr_bytes_kept") == 256);
    CHECK(capture.at("stderr_bytes_dropped") == 99744);
    CHECK(capture.at("stderr_truncated") == true);
    const auto parsed = through_text(receipt);
    REQUIRE(parsed.has_value());
    CHECK(parsed->capture == receipt.capture);
}

TEST_CASE("Base64 encoding follows RFC 4648 test vectors")
{
    CHECK(base64_encode("") == "");
    CHECK(base64_encode("f") == "Zg==");
    CHECK(base64_encode("fo") == "Zm8=");
    CHECK(base64_encode("foo") == "Zm9v");
    CHECK(base64_encode("foob") == "Zm9vYg==");
    CHECK(base64_encode("fooba") == "Zm9vYmE=");
    CHECK(base64_encode("foobar") == "Zm9vYmFy");
    CHECK(base64_decode("Zm9vYmE=") == "fooba");
    CHECK(base64_decode("") == "");
}

TEST_CASE("Base64 decoding refuses anything but the canonical form")
{
    CHECK_FALSE(base64_decode("Zm9"));        // length not a multiple of 4
    CHECK_FALSE(base64_decode("Zm9v\n"));     // whitespace
    CHECK_FALSE(base64_decode("Zm=v"));       // padding in the middle
    CHECK_FALSE(base64_decode("Zg==Zg=="));   // padding before the end
    CHECK_FALSE(base64_decode("Zh=="));       // non-zero unused bits
    CHECK_FALSE(base64_decode("Zm9v_-=="));   // URL alphabet
    CHECK_FALSE(base64_decode("===="));
    CHECK_FALSE(base64_decode("A==="));
}

TEST_CASE("UTF-8 validation follows RFC 3629")
{
    CHECK(is_valid_utf8(""));
    CHECK(is_valid_utf8("plain \x01\x7f"));
    CHECK(is_valid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
    CHECK(is_valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
    CHECK_FALSE(is_valid_utf8("\xc0\xaf"));    // overlong
    CHECK_FALSE(is_valid_utf8("\xe0\x80\xaf"));
    CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));  // surrogate
    CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
    CHECK_FALSE(is_valid_utf8("\xc3"));        // truncated
    CHECK_FALSE(is_valid_utf8("\xe2\x82"));
    CHECK_FALSE(is_valid_utf8("\x80"));
    CHECK_FALSE(is_valid_utf8("\xff"));
}

TEST_CASE("A receipt with another schema version is refused")
{
    auto document = receipt_to_json(sample_receipt());
    document.as_object()["schema_version"] = 2;
    CHECK(from_json_error(document).find("schema_version") != std::string::npos);
    document.as_object()["schema_version"] = "1";
    from_json_error(document);
}

TEST_CASE("A receipt with a missing key is refused and the key is named")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("configured").as_object().erase("pids");
    CHECK(from_json_error(document).find("configured.pids is missing") != std::string::npos);
    document = receipt_to_json(sample_receipt());
    document.as_object().erase("unknown");
    CHECK(from_json_error(document).find("unknown is missing") != std::string::npos);
}

TEST_CASE("A receipt with a value of the wrong type is refused")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("observed").at("termination").as_object()["exit_code"] = "0";
    CHECK(from_json_error(document).find("observed.termination.exit_code") != std::string::npos);
    document = receipt_to_json(sample_receipt());
    document.at("capture").as_object()["stdout_bytes"] = -1;
    from_json_error(document);
    document = receipt_to_json(sample_receipt());
    document.at("lifecycle").at("phases").as_array()[0].as_object()["duration_s"] = nullptr;
    CHECK(from_json_error(document).find("lifecycle.phases[0].duration_s") != std::string::npos);
    document = receipt_to_json(sample_receipt());
    document.at("unknown").as_object()["resources"] = "the kernel watcher is not built yet";
    CHECK(from_json_error(document).find("unknown.resources") != std::string::npos);
}

TEST_CASE("unknown carries the seed's three keys as booleans, and the reasons beside them in unknown_reasons")
{
    const auto document = receipt_to_json(sample_receipt());
    CHECK(document.at("unknown") == json::parse(R"({"final_resource_counters": false, "exact_termination_cause": false,
                                                   "absolute_clock_alignment": true, "resources": true})"));
    CHECK(document.at("unknown_reasons") ==
          json::parse(R"({"absolute_clock_alignment": "engine and host clocks are not aligned",
                          "resources": "the kernel watcher is not built yet"})"));
    // Nothing unknown: the three keys are still there, false.
    Receipt nothing_unknown = sample_receipt();
    nothing_unknown.unknown.clear();
    const auto clear = receipt_to_json(nothing_unknown);
    CHECK(clear.at("unknown") == json::parse(R"({"final_resource_counters": false, "exact_termination_cause": false,
                                                "absolute_clock_alignment": false})"));
    CHECK(clear.at("unknown_reasons").as_object().empty());
    const auto read = receipt_from_json(clear);
    REQUIRE(read.has_value());
    CHECK(read->unknown.empty());
}

TEST_CASE("The strict reader refuses an unknown flag and its reasons that contradict each other")
{
    const auto refused = [](auto change, std::string_view named) {
        auto document = receipt_to_json(sample_receipt());
        change(document.as_object());
        CHECK(from_json_error(document).find(named) != std::string::npos);
        // The tolerant reader reads past it.
        CHECK(receipt_from_json(document, ReadMode::tolerant).has_value());
    };
    // A reason without a true key.
    refused([](json::object& d) { d["unknown_reasons"].as_object()["exact_termination_cause"] = "why"; },
            "unknown_reasons.exact_termination_cause");
    refused([](json::object& d) { d["unknown_reasons"].as_object()["program_end"] = "why"; },
            "unknown_reasons.program_end");
    // A true key without a reason.
    refused([](json::object& d) { d["unknown"].as_object()["exact_termination_cause"] = true; },
            "unknown.exact_termination_cause");
    refused([](json::object& d) { d["unknown_reasons"].as_object().erase("resources"); }, "unknown.resources");
    // One of the seed's keys missing; a key outside them written as false.
    refused([](json::object& d) { d["unknown"].as_object().erase("final_resource_counters"); },
            "unknown.final_resource_counters is missing");
    refused([](json::object& d) { d["unknown"].as_object()["signal"] = false; }, "unknown.signal");
    // No unknown_reasons at all.
    auto document = receipt_to_json(sample_receipt());
    document.as_object().erase("unknown_reasons");
    CHECK(from_json_error(document).find("unknown_reasons is missing") != std::string::npos);
}

TEST_CASE("The tolerant reader reads a true key without a reason as such, and ignores a reason without a true key")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("unknown").as_object()["exact_termination_cause"] = true;
    document.at("unknown_reasons").as_object()["program_end"] = "why";
    const auto read = receipt_from_json(document, ReadMode::tolerant);
    REQUIRE(read.has_value());
    CHECK(read->unknown.at("exact_termination_cause") == "no reason given");
    CHECK_FALSE(read->unknown.contains("program_end"));
}

TEST_CASE("A receipt of the form before unknown_reasons (unknown as key -> reason) is read tolerantly, not strictly")
{
    const Receipt original = sample_receipt();
    auto document = receipt_to_json(original);
    document.as_object().erase("unknown_reasons");
    document.as_object()["unknown"] = json::object{{"resources", "the kernel watcher is not built yet"},
                                                   {"absolute_clock_alignment", "engine and host clocks are not aligned"}};
    from_json_error(document);
    const auto read = receipt_from_json(document, ReadMode::tolerant);
    REQUIRE(read.has_value());
    CHECK(read->unknown == original.unknown);
    // Read back, it is written in today's form.
    CHECK(receipt_to_json(*read) == receipt_to_json(original));
}

TEST_CASE("A receipt with a key that is not in the layout is refused")
{
    auto document = receipt_to_json(sample_receipt());
    document.as_object()["extra"] = 1;
    CHECK(from_json_error(document).find("extra is not a known field") != std::string::npos);
    document = receipt_to_json(sample_receipt());
    document.at("configured").as_object()["privileged"] = true;
    from_json_error(document);
}

TEST_CASE("A receipt whose byte counts disagree with its output is refused")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("capture").as_object()["stdout_bytes_kept"] = 4;
    from_json_error(document);
    document = receipt_to_json(sample_receipt());
    document.at("capture").as_object()["stdout_truncated"] = true;
    from_json_error(document);
    document = receipt_to_json(sample_receipt());
    document.at("capture").as_object()["stdout_bytes"] = 2;
    from_json_error(document);
}

TEST_CASE("A receipt with broken base64 output or an unknown encoding is refused")
{
    Receipt receipt = sample_receipt();
    receipt.capture.stdout_stream = {"\xff", 1};
    auto document = receipt_to_json(receipt);
    document.at("capture").as_object()["stdout"] = "/w";
    from_json_error(document);
    document = receipt_to_json(receipt);
    document.at("capture").as_object()["stdout_encoding"] = "latin-1";
    from_json_error(document);
}

TEST_CASE("A receipt with unknown enum strings is refused")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("observed").at("termination").as_object()["mechanism"] = "EXPLODED";
    from_json_error(document);
    document = receipt_to_json(sample_receipt());
    document.at("cleanup").as_object()["status"] = "removed";
    from_json_error(document);
}

TEST_CASE("A document that is not an object is refused")
{
    from_json_error(json::value(nullptr));
    from_json_error(json::array{1, 2});
}

TEST_CASE("The exit code follows the termination mechanism")
{
    Receipt receipt = sample_receipt();
    auto& termination = receipt.observed.termination;
    termination = {TerminationMechanism::target_exit_observed, 3, std::nullopt, false, 0.1};
    CHECK(exit_code_for(receipt) == 3);
    termination.exit_code = 139;
    CHECK(exit_code_for(receipt) == 139);
    termination.exit_code.reset();
    CHECK(exit_code_for(receipt) == 125);
    termination.exit_code = 300;
    CHECK(exit_code_for(receipt) == 125);
    termination = {TerminationMechanism::deadline_kill, 137, 9, true, 2.0};
    CHECK(exit_code_for(receipt) == 124);
    // Not established: the box's own code, never the deadline's.
    termination.mechanism = TerminationMechanism::cause_not_established;
    CHECK(exit_code_for(receipt) == 137);
    termination.mechanism = TerminationMechanism::out_of_memory;
    CHECK(exit_code_for(receipt) == 137);
    termination.mechanism = TerminationMechanism::not_started;
    CHECK(exit_code_for(receipt) == 125);
    termination.mechanism = TerminationMechanism::engine_lost;
    CHECK(exit_code_for(receipt) == 125);
}

TEST_CASE("A receipt with a number that reads as infinity is refused, not carried")
{
    // Found by libFuzzer: Boost.JSON reads 0.0e774 as infinity, which cannot be written back.
    std::string text = json::serialize(receipt_to_json(sample_receipt()));
    const auto at = text.find("\"total_s\":");
    REQUIRE(at != std::string::npos);
    const auto end = text.find_first_of(",}", at);
    text.replace(at, end - at, "\"total_s\":0.0e774");
    const auto read = receipt_from_json(json::parse(text));
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().code == "invalid_receipt");
}

TEST_CASE("A receipt whose kept engine or watcher facts hold a non-finite number is refused")
{
    // Found by libFuzzer: 0.0e774 deep inside observed.resources read back as a value that is
    // not equal to itself, so the receipt could not round-trip.
    for (const auto* path : {"resources", "engine_state", "effective_policy"}) {
        auto document = receipt_to_json(sample_receipt());
        document.at("observed").as_object()[path] = json::parse(R"({"phases":[{"duration_s":0.0e774}]})");
        const auto read = receipt_from_json(document);
        REQUIRE_FALSE(read.has_value());
        INFO(read.error().message);
        CHECK(read.error().message.find("observed." + std::string(path) + " holds a number that is not finite") !=
              std::string::npos);
        CHECK_FALSE(receipt_from_json(document, ReadMode::tolerant).has_value());
    }
}

TEST_CASE("A receipt with keys added at every level is refused strictly and read tolerantly")
{
    const Receipt original = sample_receipt();
    auto document = receipt_to_json(original);
    pybox::test::add_keys_everywhere(document);
    from_json_error(document);

    const auto read = receipt_from_json(document, ReadMode::tolerant);
    REQUIRE(read.has_value());
    // The engine's objects and the evidence are kept as they came, added keys included.
    Receipt expected = original;
    expected.observed.effective_policy = document.at("observed").at("effective_policy");
    expected.observed.engine_state = document.at("observed").at("engine_state");
    expected.observed.resources = document.at("observed").at("resources");
    expected.cleanup.reconciliation = document.at("cleanup").at("reconciliation");
    expected.explanations[0].evidence = document.at("explanations").at(0).at("evidence").as_object();
    expected.unknown["added_later"] = "a reason added by a newer daemon";
    CHECK(*read == expected);
    CHECK(read->unrecognized.empty());
}

TEST_CASE("Enum names this build does not know are kept by the tolerant reader")
{
    Receipt original = sample_receipt();
    original.observed.termination = {TerminationMechanism::deadline_kill, 137, 9, true, 2.0, SignalSource::pybox_kill,
                                     std::nullopt, KillAnswer::accepted, "2026-11-29T20:00:07Z"};
    auto document = receipt_to_json(original);
    auto& termination = document.at("observed").at("termination").as_object();
    termination["mechanism"] = "QUEUE_EXPIRED";
    termination["signal_source"] = "watchdog";
    termination["deadline_kill_answer"] = "deferred";
    document.at("cleanup").as_object()["status"] = "HANDED_OVER";
    from_json_error(document);

    const auto read = receipt_from_json(document, ReadMode::tolerant);
    REQUIRE(read.has_value());
    CHECK(read->observed.termination.mechanism == TerminationMechanism::unrecognized);
    CHECK(read->observed.termination.signal_source == SignalSource::unrecognized);
    CHECK(read->observed.termination.deadline_kill_answer == KillAnswer::unrecognized);
    CHECK(read->cleanup.status == CleanupStatus::unrecognized);
    CHECK(read->unrecognized == std::map<std::string, std::string>{
                                    {"observed.termination.mechanism", "QUEUE_EXPIRED"},
                                    {"observed.termination.signal_source", "watchdog"},
                                    {"observed.termination.deadline_kill_answer", "deferred"},
                                    {"cleanup.status", "HANDED_OVER"}});
}

TEST_CASE("The tolerant reader still refuses a missing key, a wrong type or another schema version")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("capture").as_object().erase("stdout");
    CHECK_FALSE(receipt_from_json(document, ReadMode::tolerant).has_value());
    document = receipt_to_json(sample_receipt());
    document.at("lifecycle").as_object()["cancelled"] = "no";
    CHECK_FALSE(receipt_from_json(document, ReadMode::tolerant).has_value());
    document = receipt_to_json(sample_receipt());
    document.as_object()["schema_version"] = 2;
    CHECK_FALSE(receipt_from_json(document, ReadMode::tolerant).has_value());
    document = receipt_to_json(sample_receipt());
    document.at("capture").as_object()["stdout_encoding"] = "zstd";
    CHECK_FALSE(receipt_from_json(document, ReadMode::tolerant).has_value());
}

TEST_CASE("An unrecognized mechanism exits with the engine's exit code, else 125")
{
    Receipt receipt = sample_receipt();
    receipt.observed.termination = {TerminationMechanism::unrecognized, 3, std::nullopt, false, 0.1};
    CHECK(exit_code_for(receipt) == 3);
    receipt.observed.termination.exit_code.reset();
    CHECK(exit_code_for(receipt) == 125);
}

TEST_CASE("The receipt names the engine by id and address and reads it back in both modes")
{
    const auto document = receipt_to_json(sample_receipt());
    CHECK(keys_of(document.at("engine")) == std::set<std::string>{"id", "address"});
    CHECK(document.at("engine").at("id") == "local");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = receipt_from_json(document, mode);
        REQUIRE(read.has_value());
        CHECK(read->engine == sample_receipt().engine);
    }
}

TEST_CASE("A receipt of a daemon older than the pool, without engine, reads in both modes as no engine")
{
    auto document = receipt_to_json(sample_receipt());
    document.as_object().erase("engine");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = receipt_from_json(document, mode);
        REQUIRE(read.has_value());
        CHECK_FALSE(read->engine.has_value());
    }
}

TEST_CASE("The receipt names the daemon's version, and a receipt of an older daemon without it still reads")
{
    auto document = receipt_to_json(sample_receipt());
    CHECK(document.at("identity").at("daemon_version") == "0.1.0+c0b8f2b");
    document.at("identity").as_object().erase("daemon_version");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = receipt_from_json(document, mode);
        REQUIRE(read.has_value());
        CHECK(read->identity.daemon_version.empty());
    }
    document.at("identity").as_object()["daemon_version"] = 1;
    CHECK(from_json_error(document).find("identity.daemon_version") != std::string::npos);
}

TEST_CASE("The program's environment beyond PyBox's is written with its source, null when not observed, and read "
          "back in both modes")
{
    Receipt receipt = sample_receipt();
    CHECK(receipt_to_json(receipt).at("observed").at("environment").is_null());
    receipt.observed.environment = EnvironmentRecord{"the box's first process", {"KUBERNETES_SERVICE_HOST=10.96.0.1"}};
    const auto document = receipt_to_json(receipt);
    CHECK(keys_of(document.at("observed").at("environment")) == std::set<std::string>{"source", "beyond_spec"});
    CHECK(document.at("observed").at("environment").at("beyond_spec").at(0) == "KUBERNETES_SERVICE_HOST=10.96.0.1");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = receipt_from_json(document, mode);
        REQUIRE(read.has_value());
        CHECK(read->observed.environment == receipt.observed.environment);
    }
    auto wrong = document;
    wrong.at("observed").at("environment").at("beyond_spec") = json::array{1};
    CHECK(from_json_error(wrong).find("observed.environment.beyond_spec") != std::string::npos);
    wrong = document;
    wrong.at("observed").at("environment").as_object().erase("source");
    CHECK(from_json_error(wrong).find("observed.environment.source") != std::string::npos);
}

TEST_CASE("A receipt of a daemon before observed.environment reads in both modes as not observed")
{
    Receipt receipt = sample_receipt();
    receipt.observed.environment = EnvironmentRecord{"the box's first process", {}};
    auto document = receipt_to_json(receipt);
    document.at("observed").as_object().erase("environment");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = receipt_from_json(document, mode);
        REQUIRE(read.has_value());
        CHECK_FALSE(read->observed.environment);
    }
}

TEST_CASE("An engine key a newer daemon adds is refused strictly and ignored tolerantly")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("engine").as_object()["region"] = "eu";
    CHECK(from_json_error(document).find("engine.region") != std::string::npos);
    const auto tolerant = receipt_from_json(document, ReadMode::tolerant);
    REQUIRE(tolerant.has_value());
    CHECK(tolerant->engine == sample_receipt().engine);
}

TEST_CASE("An engine without its address is refused in both modes")
{
    auto document = receipt_to_json(sample_receipt());
    document.at("engine").as_object().erase("address");
    CHECK(from_json_error(document).find("engine.address") != std::string::npos);
    CHECK_FALSE(receipt_from_json(document, ReadMode::tolerant).has_value());
}
