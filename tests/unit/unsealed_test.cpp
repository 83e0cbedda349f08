// The unsealed runner's pure parts (client/unsealed/unsealed_plan) and the receipt of an
// unsealed run: its schema, its reading, and that only the unsealed maker can clear `sealed`.
#include "client/short_view.hpp"
#include "client/unsealed/unsealed_plan.hpp"
#include "common/limited_process.hpp"
#include "common/process.hpp"
#include "proto/receipt.hpp"
#include "tests/support/sample_receipt.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <thread>

using namespace pybox;
using namespace pybox::client::unsealed;
namespace json = boost::json;

namespace {

const std::filesystem::path k_file = "/home/u/.pybox/runtime/config.json";

UnsealedEvidence hello_evidence()
{
    UnsealedEvidence evidence;
    evidence.run_id = std::string(32, 'e');
    evidence.created_at = "2026-12-01T23:00:00.000001Z";
    evidence.source_sha256 = std::string(64, 'd');
    evidence.source_bytes = 14;
    evidence.timeout_s = 2.0;
    evidence.output_limit_bytes = 65'536;
    evidence.user = "1000:1000";
    evidence.command = python_command("/usr/bin/python3");
    evidence.facts.python = "/usr/bin/python3";
    evidence.facts.working_folder = "/tmp/pybox-unsealed-abc123";
    evidence.facts.working_folder_removed = true;
    evidence.facts.environment = scrubbed_environment(evidence.facts.working_folder);
    evidence.facts.limits = plan_limits(2.0, 100);
    evidence.result.exit_code = 0;
    evidence.result.stdout_stream = {"hello\n", 6};
    evidence.result.streams_ended = true;
    evidence.result.ended = evidence.result.started + std::chrono::milliseconds(40);
    evidence.prepare_s = 0.001;
    evidence.cleanup_s = 0.002;
    return evidence;
}

bool has_explanation(const proto::Receipt& receipt, const std::string& code)
{
    for (const auto& explanation : receipt.explanations)
        if (explanation.code == code) return true;
    return false;
}

const json::value* at(const json::value& root, std::string_view path)
{
    const json::value* value = &root;
    while (value != nullptr) {
        const auto dot = path.find('.');
        value = value->as_object().if_contains(path.substr(0, dot));
        if (dot == std::string_view::npos) break;
        path.remove_prefix(dot + 1);
    }
    return value;
}

}  // namespace

TEST_CASE("The interpreter is /usr/bin/python3 unless config.json names another by an absolute path")
{
    CHECK(python_from_config(std::nullopt, k_file).value() == "/usr/bin/python3");
    CHECK(python_from_config(R"({"warm_boxes": 0})", k_file).value() == "/usr/bin/python3");
    CHECK(python_from_config(R"({"unsealed_python": "/opt/py/bin/python3.11"})", k_file).value() ==
          "/opt/py/bin/python3.11");
    for (const char* text : {R"({"unsealed_python": "python3"})", R"({"unsealed_python": "bin/python3"})",
                             R"({"unsealed_python": ""})", R"({"unsealed_python": 3})", R"([1])", "{"}) {
        const auto python = python_from_config(std::string(text), k_file);
        REQUIRE_FALSE(python.has_value());
        CHECK(python.error().code == "config_invalid");
        CHECK(python.error().message.find(k_file.string()) != std::string::npos);
    }
    CHECK(python_from_config(R"({"unsealed_python": "python3"})", k_file).error().message.find("$PATH") !=
          std::string::npos);
}

TEST_CASE("The limits are the stdlib box's, the processes counted on top of the user's own")
{
    const auto limits = plan_limits(2.5, 140);
    CHECK(limits.address_space_bytes == 128 * 1024 * 1024);
    CHECK(limits.processes == 140 + 32);
    CHECK(limits.user_processes_at_start == 140);
    CHECK(limits.cpu_seconds == 4);
    CHECK(limits.file_size_bytes == 16 * 1024 * 1024);
    CHECK(limits.open_files == 128);
    CHECK(limits.core_bytes == 0);
    CHECK(plan_limits(2.0, 0).cpu_seconds == 3);

    const auto calls = resource_limits(limits);
    REQUIRE(calls.size() == 6);
    for (const auto& call : calls) {
        if (call.kind == ResourceKind::cpu_seconds) {
            CHECK(call.hard == call.soft + 1);  // SIGXCPU first, then SIGKILL
        } else {
            CHECK(call.hard == call.soft);
        }
    }
}

TEST_CASE("The program's environment is a fixed list and nothing of the caller's")
{
    ::setenv("PYBOX_UNSEALED_TEST_SECRET", "hunter2", 1);
    const auto environment = scrubbed_environment("/tmp/pybox-unsealed-x");
    CHECK(environment == std::vector<std::string>{"PATH=/usr/bin:/bin", "HOME=/tmp/pybox-unsealed-x",
                                                  "TMPDIR=/tmp/pybox-unsealed-x", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
                                                  "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8",
                                                  "PYTHONUNBUFFERED=1"});
    ::unsetenv("PYBOX_UNSEALED_TEST_SECRET");
    CHECK(python_command("/usr/bin/python3") == std::vector<std::string>{"/usr/bin/python3", "-I", "-B", "-"});
}

TEST_CASE("An unsealed receipt says sealed false and isolation none, and every sealed-only field is null and named")
{
    const auto receipt = unsealed_receipt(hello_evidence());
    CHECK_FALSE(receipt.sealed());
    const auto document = proto::receipt_to_json(receipt);
    CHECK(document.at("sealed") == false);
    CHECK(document.at("isolation") == "none");
    const auto& named = document.at("not_applicable").as_object();
    CHECK(named.size() == proto::sealed_only_fields().size());
    for (const auto& field : proto::sealed_only_fields()) {
        INFO(field.path);
        const auto* value = at(document, field.path);
        REQUIRE(value != nullptr);
        CHECK(value->is_null());
        CHECK(named.at(field.path).as_string().starts_with("unsealed run"));
    }
    CHECK(document.at("configured").at("network") == "not blocked");
    CHECK(document.at("unsealed").at("python") == "/usr/bin/python3");
    CHECK(document.at("unsealed").at("limits").at("processes") == 132);
    CHECK(document.at("capture").at("provenance").as_string().find("pybox client") != json::string::npos);
    CHECK(has_explanation(receipt, "UNSEALED_RUN"));
    CHECK(has_explanation(receipt, "EXITED"));
    CHECK(proto::exit_code_for(receipt) == 0);
    // No box, so no kernel counters: not claimed as known.
    CHECK(document.at("unknown").at("final_resource_counters") == true);
    CHECK(document.at("unknown").at("exact_termination_cause") == false);
    CHECK(document.at("unknown_reasons").at("final_resource_counters").as_string().find("no kernel counters") !=
          json::string::npos);
}

TEST_CASE("An unsealed receipt reads back, strict and tolerant, equal to what was written")
{
    const auto receipt = unsealed_receipt(hello_evidence());
    const auto text = json::serialize(proto::receipt_to_json(receipt));
    const auto strict = proto::receipt_from_json(json::parse(text));
    REQUIRE(strict.has_value());
    CHECK_FALSE(strict->sealed());
    CHECK(strict->unsealed() == receipt.unsealed());
    CHECK(strict->capture == receipt.capture);
    CHECK(strict->observed.termination == receipt.observed.termination);
    CHECK(strict->explanations == receipt.explanations);
    CHECK(strict->unknown == receipt.unknown);

    auto newer = json::parse(text);
    test::add_keys_everywhere(newer);
    const auto tolerant = proto::receipt_from_json(newer, util::ReadMode::tolerant);
    REQUIRE(tolerant.has_value());
    CHECK_FALSE(tolerant->sealed());
}

TEST_CASE("An unsealed receipt of a client before observed.environment, without it or its entry, reads in both modes")
{
    auto document = proto::receipt_to_json(unsealed_receipt(hello_evidence()));
    document.at("observed").as_object().erase("environment");
    document.at("not_applicable").as_object().erase("observed.environment");
    for (const auto mode : {util::ReadMode::strict, util::ReadMode::tolerant}) {
        const auto read = proto::receipt_from_json(document, mode);
        REQUIRE(read.has_value());
        CHECK_FALSE(read->sealed());
    }
    // Named but absent, or present but not named, is still refused.
    auto named_only = proto::receipt_to_json(unsealed_receipt(hello_evidence()));
    named_only.at("observed").as_object().erase("environment");
    CHECK_FALSE(proto::receipt_from_json(named_only, util::ReadMode::tolerant).has_value());
    auto unnamed = proto::receipt_to_json(unsealed_receipt(hello_evidence()));
    unnamed.at("not_applicable").as_object().erase("observed.environment");
    CHECK_FALSE(proto::receipt_from_json(unnamed, util::ReadMode::tolerant).has_value());
}

TEST_CASE("The short view of an unsealed run says UNSEALED in its first line")
{
    const auto view = client::render_short_receipt(unsealed_receipt(hello_evidence()));
    const auto first_line = view.substr(0, view.find('\n'));
    CHECK(first_line.find("UNSEALED") != std::string::npos);
    CHECK(view.find("Network               not blocked") != std::string::npos);
    CHECK(view.find("From the container engine") == std::string::npos);
}

TEST_CASE("A sealed run's receipt says sealed true and isolation container, and nothing is not applicable")
{
    const proto::Receipt fresh;  // how the daemon's runs begin their receipts
    CHECK(fresh.sealed());
    const auto document = proto::receipt_to_json(test::sample_receipt());
    CHECK(document.at("sealed") == true);
    CHECK(document.at("isolation") == "container");
    CHECK(document.at("not_applicable").as_object().empty());
    CHECK(document.at("unsealed").is_null());
    REQUIRE(proto::receipt_from_json(document).has_value());
    CHECK(proto::receipt_from_json(document)->sealed());
}

TEST_CASE("A sealed run's receipt cannot be read as unsealed by flipping its flags")
{
    auto document = proto::receipt_to_json(test::sample_receipt());
    document.as_object()["sealed"] = false;
    CHECK_FALSE(proto::receipt_from_json(document).has_value());
    document.as_object()["isolation"] = "none";
    CHECK_FALSE(proto::receipt_from_json(document, util::ReadMode::tolerant).has_value());

    auto unsealed = proto::receipt_to_json(unsealed_receipt(hello_evidence()));
    unsealed.as_object()["sealed"] = true;
    CHECK_FALSE(proto::receipt_from_json(unsealed).has_value());
    auto mixed = proto::receipt_to_json(unsealed_receipt(hello_evidence()));
    mixed.as_object()["isolation"] = "container";
    CHECK_FALSE(proto::receipt_from_json(mixed).has_value());
    auto filled = proto::receipt_to_json(unsealed_receipt(hello_evidence()));
    filled.as_object()["configured"].as_object()["seccomp"] = "pybox-seccomp-v1";
    CHECK_FALSE(proto::receipt_from_json(filled, util::ReadMode::tolerant).has_value());
}

TEST_CASE("A receipt of a daemon before unsealed runs, without the four keys, reads as sealed")
{
    auto document = proto::receipt_to_json(test::sample_receipt());
    for (const char* key : {"sealed", "isolation", "not_applicable", "unsealed"}) document.as_object().erase(key);
    const auto receipt = proto::receipt_from_json(document);
    REQUIRE(receipt.has_value());
    CHECK(receipt->sealed());
}

TEST_CASE("An unsealed run killed at the deadline is a DEADLINE_KILL with exit code 124")
{
    auto evidence = hello_evidence();
    evidence.result.exit_code.reset();
    evidence.result.signal = 9;
    evidence.result.deadline_kill_sent = true;
    evidence.result.deadline_kill_delivered = true;
    evidence.deadline_kill_sent_at = "2026-12-01T23:00:02.000001Z";
    const auto receipt = unsealed_receipt(evidence);
    const auto& termination = receipt.observed.termination;
    CHECK(termination.mechanism == proto::TerminationMechanism::deadline_kill);
    CHECK(termination.signal == 9);
    CHECK(termination.signal_source == proto::SignalSource::pybox_kill);
    CHECK(termination.deadline_kill_answer == proto::KillAnswer::accepted);
    CHECK(receipt.lifecycle.timeouts == std::vector<std::string>{"deadline"});
    CHECK(proto::exit_code_for(receipt) == 124);
    CHECK(proto::receipt_from_json(proto::receipt_to_json(receipt)).has_value());
}

TEST_CASE("An unsealed run ended by a signal nobody is known to have sent returns 128 + N")
{
    auto evidence = hello_evidence();
    evidence.result.exit_code.reset();
    evidence.result.signal = 24;  // SIGXCPU: the CPU limit
    const auto receipt = unsealed_receipt(evidence);
    CHECK(receipt.observed.termination.mechanism == proto::TerminationMechanism::target_exit_observed);
    CHECK(receipt.observed.termination.signal_source == proto::SignalSource::wait_status);
    CHECK(has_explanation(receipt, "ENDED_BY_SIGNAL"));
    CHECK(proto::exit_code_for(receipt) == 152);
    CHECK(client::render_short_receipt(receipt).find("who sent it is not known") != std::string::npos);
}

TEST_CASE("Unsealed output over the cap is flagged as for sealed runs, and leftovers are reported")
{
    auto evidence = hello_evidence();
    evidence.output_limit_bytes = 4;
    evidence.result.stdout_stream = {"hell", 1'000'000};
    evidence.facts.group_killed_after_exit = true;
    evidence.facts.working_folder_removed = false;
    const auto receipt = unsealed_receipt(evidence);
    CHECK(receipt.capture.stdout_stream.truncated());
    CHECK_FALSE(receipt.capture.output_complete);
    CHECK(has_explanation(receipt, "OUTPUT_TRUNCATED"));
    CHECK(has_explanation(receipt, "PROCESSES_LEFT_KILLED"));
    CHECK(has_explanation(receipt, "WORKING_FOLDER_NOT_REMOVED"));
    const auto document = proto::receipt_to_json(receipt);
    CHECK(document.at("capture").at("stdout_truncated") == true);
    CHECK(document.at("capture").at("stdout_bytes_dropped") == 999'996);
}

TEST_CASE("run_limited gives the program exactly its environment and folder, and caps each stream")
{
    const auto folder = make_temporary_folder(std::filesystem::temp_directory_path(), "pybox-limited-test-");
    REQUIRE(folder.has_value());
    LimitedRun run;
    run.argv = {"/bin/sh", "-s"};
    run.environment = {"PATH=/usr/bin:/bin", "ONLY=this"};
    run.working_dir = *folder;
    run.input = "env | sort; pwd; head -c 5000 /dev/zero | tr '\\0' x >&2; exit 3\n";
    run.limits = {{ResourceKind::core_size, 0, 0}};
    run.output_cap = 1000;
    const auto result = run_limited(run);
    std::filesystem::remove_all(*folder);
    REQUIRE(result.has_value());
    CHECK(result->exit_code == 3);
    CHECK(result->stdout_stream.bytes.find("ONLY=this\n") != std::string::npos);
    CHECK(result->stdout_stream.bytes.find("HOME=") == std::string::npos);
    CHECK(result->stdout_stream.bytes.find(folder->string()) != std::string::npos);
    CHECK(result->stderr_stream.bytes.size() == 1000);
    CHECK(result->stderr_stream.total_bytes == 5000);
    CHECK(result->streams_ended);
    CHECK_FALSE(result->deadline_kill_sent);
}

TEST_CASE("run_limited kills the whole process group at the deadline")
{
    LimitedRun run;
    run.argv = {"/bin/sh", "-s"};
    run.environment = {"PATH=/usr/bin:/bin"};
    run.working_dir = "/";
    run.input = "sleep 30 & echo $!; sleep 30\n";
    run.deadline = std::chrono::milliseconds(300);
    run.output_cap = 100;
    const auto result = run_limited(run);
    REQUIRE(result.has_value());
    CHECK(result->deadline_kill_sent);
    CHECK(result->signal == 9);
    const int child = std::stoi(result->stdout_stream.bytes);
    for (int i = 0; i < 50 && process_alive(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK_FALSE(process_alive(child));
}

TEST_CASE("run_limited kills what the program left in its group when it ends")
{
    LimitedRun run;
    run.argv = {"/bin/sh", "-s"};
    run.environment = {"PATH=/usr/bin:/bin"};
    run.working_dir = "/";
    run.input = "sleep 30 >/dev/null 2>&1 & echo $!\n";
    run.deadline = std::chrono::milliseconds(5'000);
    run.output_cap = 100;
    const auto result = run_limited(run);
    REQUIRE(result.has_value());
    CHECK(result->exit_code == 0);
    CHECK_FALSE(result->deadline_kill_sent);
    CHECK(result->group_killed_after_exit);
    const int child = std::stoi(result->stdout_stream.bytes);
    for (int i = 0; i < 50 && process_alive(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK_FALSE(process_alive(child));
}

TEST_CASE("run_limited refuses a relative program and reports one that cannot start")
{
    LimitedRun run;
    run.argv = {"sh"};
    CHECK(run_limited(run).error().code == "spawn_failed");
    run.argv = {"/nonexistent/python3"};
    run.working_dir = "/";
    CHECK(run_limited(run).error().code == "spawn_failed");
}
