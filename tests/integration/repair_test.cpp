// `pybox repair` end to end: the real client and a pyboxd whose config.json names a scripted
// OpenAI-compatible server on 127.0.0.1 over TLS (a CA the test makes), every run on the real
// engine. The server records every request, so the tests check what reached the model; every
// output is checked for the key.
#include "harness.hpp"
#include "tests/support/scripted_model_server.hpp"

#include "common/files.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace pybox;
using namespace pybox::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

const std::string k_key = "nvapi-REPAIR-TEST-0123456789abcdefghijklmnop";
const std::string k_broken = "print(undefined_name)\n";

// A chat-completions answer whose text is `content`.
std::string chat_answer(const std::string& content)
{
    return json::serialize(json::object{
        {"model", "test/repair-model"},
        {"choices", json::array{json::object{{"index", 0},
                                             {"message", json::object{{"role", "assistant"}, {"content", content}}},
                                             {"finish_reason", "stop"}}}},
        {"usage", json::object{{"prompt_tokens", 300}, {"completion_tokens", 40}}}});
}

ScriptedAnswer program_answer(const std::string& program)
{
    return {200, chat_answer("The fix:\n```python\n" + program + "\n```\n")};
}

// A pyboxd whose model is the scripted server on `port`, its key in a 0600 file.
json::object model_config(unsigned short port)
{
    return json::object{{"warm_boxes", 0},
                        {"model", json::object{{"base_url", "https://127.0.0.1:" + std::to_string(port)},
                                               {"model", "test/repair-model"},
                                               {"api_key_file", (runtime_home().string() + "-repair-key")},
                                               {"ca_file", TestPki::get().ca().string()},
                                               {"answer_timeout_s", 2}}}};
}

void write_key()
{
    const fs::path file = runtime_home().string() + "-repair-key";
    std::ofstream(file) << k_key << "\n";
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
}

struct Repair {
    ProcessResult result;
    json::value record;  // with --json
};

Repair repair(const SideDaemon& daemon, const fs::path& program, std::vector<std::string> extra = {})
{
    std::vector<std::string> args{"repair", program.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    Repair run{daemon.pybox(args), nullptr};
    INFO(run.result.error_output);
    CHECK(run.result.output.find(k_key) == std::string::npos);
    CHECK(run.result.error_output.find(k_key) == std::string::npos);
    if (std::find(args.begin(), args.end(), "--json") != args.end()) run.record = json::parse(run.result.output);
    return run;
}

std::string text_of(const json::value& value)
{
    return std::string(value.as_string());
}

}  // namespace

TEST_CASE("pybox repair against a scripted model: fixed on round 2, retries, refusals, bad answers, limits",
          "[integration][repair]")
{
    write_key();
    const fs::path folder = runtime_home().string() + "-repair-files";
    fs::remove_all(folder);
    fs::create_directories(folder);
    const fs::path program = folder / "prog.py";
    std::ofstream(program) << k_broken;

    const std::string over_limit = std::string(1024 * 1024 + 1024, ' ') + chat_answer("```python\nprint(1)\n```");
    ScriptedModelServer server("localhost", {
        // Fixed on round 2.
        program_answer("print(undefined_name_too)"),
        program_answer("print('repaired')"),
        // 429 with Retry-After, then the fix.
        {429, R"({"error": {"message": "slow down"}})", {{"Retry-After", "1"}}},
        program_answer("print('repaired after a wait')"),
        // 401: the key refused, not tried again.
        {401, R"({"error": {"message": "invalid key )" + k_key + R"("}})"},
        // No code block, then two.
        {200, chat_answer("Just define undefined_name first.")},
        {200, chat_answer("```python\na = 1\n```\nor\n```python\nb = 2\n```")},
        // An answer over the body limit, then one slower than answer_timeout_s.
        {200, over_limit},
        {200, chat_answer("```python\nprint(1)\n```"), {}, 4s},
        // A new broken program every round, until the rounds are used.
        program_answer("print(other_name)"),
        program_answer("print(third_name)"),
    });
    SideDaemon daemon("repair", model_config(server.port()));

    SECTION("every scenario in turn")
    {
        // Fixed on round 2: the diff on stdout, the program written only where --write says.
        const fs::path fixed = folder / "fixed.py";
        auto run = repair(daemon, program, {"--write", fixed.string()});
        INFO(run.result.error_output);
        CHECK(run.result.exit_code == 0);
        CHECK_THAT(run.result.error_output, Catch::Contains("Repaired at step 2.") &&
                                                Catch::Contains("step 0  the original") &&
                                                Catch::Contains("test/repair-model (300+40 tokens"));
        CHECK_THAT(run.result.output, Catch::Contains("--- " + program.string()) &&
                                          Catch::Contains("-print(undefined_name)\n+print('repaired')\n"));
        auto written = read_file_capped(fixed, 1024);
        REQUIRE(written.has_value());
        CHECK(*written == "print('repaired')\n");
        auto original = read_file_capped(program, 1024);
        CHECK(*original == k_broken);
        auto requests = server.requests();
        REQUIRE(requests.size() == 2);
        for (const auto& request : requests) {
            CHECK(request.method == "POST");
            CHECK(request.target == "/v1/chat/completions");
            CHECK(request.authorization == "Bearer " + k_key);
            CHECK(json::parse(request.body).at("model") == "test/repair-model");
        }
        // The failure reached the model: the program, how it ended, its traceback.
        const auto first = json::parse(requests[0].body).at("messages");
        CHECK(first.as_array().size() == 2);
        const std::string told = text_of(first.at(1).at("content"));
        CHECK_THAT(told, Catch::Contains(k_broken) && Catch::Contains("It exited with code 1.") &&
                             Catch::Contains("NameError: name 'undefined_name' is not defined"));
        const auto second = json::parse(requests[1].body).at("messages");
        CHECK(second.as_array().size() == 4);
        CHECK_THAT(text_of(second.at(3).at("content")), Catch::Contains("undefined_name_too"));

        // 429 then 200 with Retry-After; the record says so, and --write never replaces
        // without --force (stdin is not a terminal, so nobody is asked).
        run = repair(daemon, program, {"--json", "--write", fixed.string()});
        CHECK(run.result.exit_code == 125);
        CHECK_THAT(run.result.error_output, Catch::Contains("kept existing " + fixed.string() + ": use --force"));
        CHECK(*read_file_capped(fixed, 1024) == "print('repaired')\n");
        CHECK(run.record.at("stop_reason") == "fixed");
        const auto& steps = run.record.at("steps").as_array();
        REQUIRE(steps.size() == 2);
        CHECK(steps[1].at("model_call").at("tries") == 2);
        CHECK(steps[1].at("model_call").at("latency_s").as_double() >= 1.0);
        CHECK(steps[1].at("receipt").at("capture").at("stdout") == "repaired after a wait\n");
        CHECK(steps[0].at("receipt").at("observed").at("policy_verified_before_start") == true);
        // Each run's receipt is issued as a run's own: signed by the installation.
        for (const auto& step : steps) CHECK(step.at("receipt").at("signature").at("algorithm") == "Ed25519");
        CHECK(server.requests()[3].arrived - server.requests()[2].arrived >= 1s);

        // 401: not tried again, a clear message without the key.
        const auto before_401 = server.requests().size();
        run = repair(daemon, program, {"--json"});
        CHECK(run.result.exit_code == 1);
        CHECK(run.record.at("stop_reason") == "model_failed");
        const auto& refused = run.record.at("steps").as_array().at(1);
        CHECK(refused.at("error").at("code") == "model_auth");
        CHECK(server.requests().size() == before_401 + 1);
        CHECK_THAT(run.result.error_output, Catch::Contains("model_auth"));

        // No code block; two blocks.
        run = repair(daemon, program, {"--json"});
        CHECK(run.result.exit_code == 1);
        CHECK(run.record.at("stop_reason") == "no_usable_block");
        CHECK(run.record.at("steps").as_array().at(1).at("detail") == "The answer has no fenced code block.");
        run = repair(daemon, program, {"--json"});
        CHECK(run.record.at("steps").as_array().at(1).at("detail") ==
              "The answer has 2 fenced code blocks; exactly one was asked for.");
        CHECK_THAT(run.result.error_output, Catch::Contains("Not repaired: the model's answer held no usable program."));

        // Over the body limit; slower than answer_timeout_s.
        run = repair(daemon, program, {"--json"});
        CHECK(run.record.at("steps").as_array().at(1).at("error").at("code") == "model_protocol");
        const auto slow_started = std::chrono::steady_clock::now();
        run = repair(daemon, program, {"--json"});
        CHECK(run.record.at("steps").as_array().at(1).at("error").at("code") == "model_timeout");
        CHECK(std::chrono::steady_clock::now() - slow_started < 4s);

        // A new broken program each round: it stops when the rounds are used.
        run = repair(daemon, program, {"--json", "--rounds", "2"});
        CHECK(run.result.exit_code == 1);
        CHECK(run.record.at("stop_reason") == "rounds_used");
        CHECK(run.record.at("steps").as_array().size() == 3);
        CHECK(run.record.at("final_step").is_null());
        CHECK(run.result.output.find(k_key) == std::string::npos);
    }
    fs::remove_all(folder);
}

TEST_CASE("pybox repair: a model certificate that does not verify is refused before anything is sent",
          "[integration][repair]")
{
    write_key();
    ScriptedModelServer stranger("stranger", {program_answer("print('never')")});
    SideDaemon daemon("repair-tls", model_config(stranger.port()));
    const fs::path program = runtime_home().string() + "-repair-tls.py";
    std::ofstream(program) << k_broken;
    auto run = repair(daemon, program, {"--json"});
    CHECK(run.result.exit_code == 1);
    CHECK(run.record.at("stop_reason") == "model_failed");
    CHECK(run.record.at("steps").as_array().at(1).at("error").at("code") == "model_tls");
    CHECK(stranger.requests().empty());
    CHECK(stranger.handshakes_failed() >= 1);
    fs::remove(program);
}

TEST_CASE("pybox repair without a model is refused and runs nothing; a program that works is not sent",
          "[integration][repair]")
{
    const fs::path program = runtime_home().string() + "-repair-none.py";
    std::ofstream(program) << k_broken;
    const auto refused = run_pybox({"repair", program.string()});
    CHECK(refused.exit_code == 125);
    CHECK_THAT(refused.error_output, Catch::Contains("has no model to ask"));

    write_key();
    ScriptedModelServer server("localhost", {});
    SideDaemon daemon("repair-works", model_config(server.port()));
    std::ofstream(program) << "print('fine')\n";
    auto run = repair(daemon, program, {"--json"});
    CHECK(run.result.exit_code == 0);
    CHECK(run.record.at("stop_reason") == "original_succeeded");
    CHECK(server.requests().empty());
    fs::remove(program);
}
