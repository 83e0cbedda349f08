// The seed page's programs and the basic promises of `pybox exec`, against the real engine.
#include "tests/integration/harness.hpp"

#include "common/files.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

std::string mechanism(const json::value& receipt)
{
    return std::string(receipt.at("observed").at("termination").at("mechanism").as_string());
}

}  // namespace

TEST_CASE("print(6*7) prints 42, exits 0 and ends with a short receipt")
{
    const auto run = run_pybox({"exec", "-"}, "print(6*7)\n");
    CHECK(run.exit_code == 0);
    CHECK(run.output == "42\n");
    CHECK(run.error_output.find("PyBox receipt") != std::string::npos);
    CHECK(run.error_output.find("removed and confirmed gone") != std::string::npos);
}

TEST_CASE("A program read from a file runs like one from stdin")
{
    const auto file = runtime_home() / "program_from_file.py";
    REQUIRE(write_file_atomic(file, "print('from a file')\n").has_value());
    const auto run = run_pybox({"exec", file.string()});
    CHECK(run.exit_code == 0);
    CHECK(run.output == "from a file\n");
}

TEST_CASE("The full receipt has every top-level key of the seed's layout and says the box is gone")
{
    const auto run = run_json("print('hello inspection')\n");
    CHECK(run.process.exit_code == 0);
    const auto& receipt = run.receipt.as_object();
    for (const char* key : {"schema_version", "sealed", "isolation", "identity", "container_id", "submission",
                            "configured", "observed", "capture", "lifecycle", "cleanup", "clock_domains", "unknown",
                            "unknown_reasons", "not_applicable", "files", "unsealed", "explanations"})
        CHECK(receipt.contains(key));
    CHECK(receipt.at("schema_version") == 1);
    // A sealed run says so, and nothing in it is marked not applicable.
    CHECK(receipt.at("sealed") == true);
    CHECK(receipt.at("isolation") == "container");
    CHECK(receipt.at("not_applicable").as_object().empty());
    CHECK(receipt.at("unsealed").is_null());
    CHECK(receipt.at("capture").at("stdout") == "hello inspection\n");
    CHECK(receipt.at("observed").at("policy_verified_before_start") == true);
    CHECK(receipt.at("observed").at("effective_policy").at("mismatches").as_array().empty());
    CHECK(receipt.at("observed").at("engine_state").at("ExitCode") == 0);
    CHECK(mechanism(run.receipt) == "TARGET_EXIT_OBSERVED");
    CHECK(receipt.at("cleanup").at("status") == "REMOVED");
    CHECK(receipt.at("cleanup").at("removed") == true);
    CHECK(receipt.at("configured").at("memory_bytes") == 134217728);
    CHECK(receipt.at("configured").at("network") == "none");
    // The final counters are either all read after the exit, or the unknown ones are named. As
    // in the seed, the status is COLLECTED either way, and unknown has the seed's three flags.
    const auto& resources = receipt.at("observed").at("resources");
    CHECK(resources.at("status") == "COLLECTED");
    CHECK(resources.at("sample_count").as_int64() >= 1);
    CHECK(resources.at("metrics").as_object().contains("memory.peak"));
    CHECK(resources.at("metrics").at("memory.peak").as_object().contains("last"));
    const auto& unknown = receipt.at("unknown").as_object();
    for (const char* key : {"final_resource_counters", "exact_termination_cause", "absolute_clock_alignment"})
        CHECK(unknown.at(key).is_bool());
    CHECK(resources.at("final_counters_complete").as_bool() == !unknown.at("final_resource_counters").as_bool());
    CHECK(resources.at("final_counters_complete").as_bool() ==
          !receipt.at("unknown_reasons").as_object().contains("final_resource_counters"));
}

TEST_CASE("A program still running at the deadline is killed and the command exits 124")
{
    const auto run = run_json("import time\ntime.sleep(8)\n", {"--timeout", "0.5"});
    CHECK(run.process.exit_code == 124);
    CHECK(mechanism(run.receipt) == "DEADLINE_KILL");
    CHECK(run.receipt.at("observed").at("termination").at("deadline_kill_sent") == true);
    CHECK(run.receipt.at("lifecycle").at("timing").at("total_s").to_number<double>() < 5.0);
    CHECK(run.receipt.at("cleanup").at("removed") == true);
}

TEST_CASE("The box's /etc/hosts is its own empty file, not the host's")
{
    const auto run = run_pybox({"exec", "-"}, "print(open('/etc/hosts').read()[:80])\n");
    CHECK(run.exit_code == 0);
    auto host_hosts = read_file_capped("/etc/hosts", 1 << 20);
    REQUIRE(host_hosts.has_value());
    REQUIRE_FALSE(host_hosts->empty());
    CHECK(run.output == "\n");
}

TEST_CASE("Nothing of the build host's network settings is in the box")
{
    const auto run = run_pybox({"exec", "-"}, "print(repr(open('/etc/resolv.conf').read()), open('/etc/hostname').read().strip())\n");
    CHECK(run.exit_code == 0);
    CHECK(run.output == "'' pybox\n");
}

TEST_CASE("Allocating 300 MiB in a 128 MiB box is an out-of-memory reported by the engine")
{
    const auto run = run_json("x = bytearray(300 * 1024 * 1024)\n");
    CHECK(mechanism(run.receipt) == "OUT_OF_MEMORY");
    CHECK(run.receipt.at("observed").at("engine_state").at("OOMKilled") == true);
    CHECK(run.process.exit_code == 137);
}

TEST_CASE("The program's own exit code is passed through")
{
    CHECK(run_pybox({"exec", "-"}, "import sys\nsys.exit(7)\n").exit_code == 7);
}

TEST_CASE("The program's stderr goes to stderr before the receipt")
{
    const auto run = run_pybox({"exec", "-"}, "import sys\nprint('to stderr', file=sys.stderr)\nprint('to stdout')\n");
    CHECK(run.output == "to stdout\n");
    const auto at = run.error_output.find("to stderr\n");
    REQUIRE(at != std::string::npos);
    CHECK(at < run.error_output.find("PyBox receipt"));
}

TEST_CASE("An uncaught exception exits 1 with the traceback on stderr")
{
    const auto run = run_json("raise ValueError('boom')\n");
    CHECK(run.process.exit_code == 1);
    CHECK(std::string(run.receipt.at("capture").at("stderr").as_string()).find("ValueError: boom") != std::string::npos);
}

TEST_CASE("Output over the cap is kept to the cap and the rest is counted")
{
    const auto run = run_json("print('x' * 5000)\n", {"--output-limit", "1000"});
    const auto& capture = run.receipt.at("capture");
    CHECK(capture.at("stdout").as_string().size() == 1000);
    CHECK(capture.at("stdout_bytes_kept") == 1000);
    CHECK(capture.at("stdout_bytes_dropped") == 4001);
    CHECK(capture.at("stdout_truncated") == true);
    CHECK(capture.at("output_complete") == false);
}

TEST_CASE("--json prints the receipt alone on stdout")
{
    const auto run = run_json("print('not on stdout directly')\n");
    CHECK(run.process.output.find("PyBox receipt") == std::string::npos);
    CHECK(run.process.error_output.empty());
}

TEST_CASE("Invalid UTF-8, NUL and escape bytes are kept exactly")
{
    const auto run = run_pybox({"exec", "-"}, "import sys\nsys.stdout.buffer.write(b'\\xff\\x00\\x1b[31m\\xc3')\n");
    CHECK(run.exit_code == 0);
    CHECK(run.output == std::string("\xff\x00\x1b[31m\xc3", 8));
}
