// docs/hostile.md cases 26-29 (file transfer), as a hostile client and program would try them:
// bad input names and caps sent straight to the daemon's socket (the client never sends them, so
// the daemon must refuse them itself), and a program that leaves a process behind to write into
// the output folder after it ended (case 25 in a files run). The output cases 28-29 are in
// tests/integration/files_test.cpp ("Hostile outputs ..."). Each case ends clean.
#include "tests/hostile/hostile.hpp"

#include "util/text.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <filesystem>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

std::string files_request(const json::array& inputs)
{
    return json::serialize(json::object{{"source", "print(1)"}, {"files", json::object{{"inputs", inputs}, {"outputs", true}}}});
}

json::object input(const std::string& name, const std::string& bytes = "x")
{
    return json::object{{"name", name}, {"base64", util::base64_encode(bytes)}};
}

}  // namespace

// docs/hostile.md cases 26 and 27
TEST_CASE("Bad input names and sets sent to the socket are refused before any box exists")
{
    std::vector<std::pair<std::string, json::array>> cases{
        {"../x", {input("../x")}},
        {"/abs", {input("/abs")}},
        {"a/../../b", {input("a/../../b")}},
        {".", {input(".")}},
        {"empty", {input("")}},
        {"NUL", {input(std::string("a\0b", 3))}},
        {"newline", {input("a\nb")}},
        {"256 bytes", {input(std::string(256, 'n'))}},
        {"duplicates", {input("a"), input("a")}},
        {"a with a/b", {input("a"), input("a/b")}},
        {"8 MiB + 1", {input("big", std::string(8 * 1024 * 1024 + 1, 'x'))}},
    };
    json::array many;
    for (int i = 0; i < 65; ++i) many.push_back(input("f" + std::to_string(i)));
    cases.emplace_back("65 files", many);
    const auto attempts_before = attempt_files();
    for (const auto& [what, inputs] : cases) {
        INFO(what);
        const auto reply = raw_exchange(daemon_socket(), post_runs(files_request(inputs)));
        const auto answers = split_answers(reply.bytes);
        REQUIRE(answers.size() == 1);
        CHECK(answers[0].status == 400);
        CHECK(error_code(answers[0]) == "input_files_invalid");
    }
    CHECK(new_attempt_files(attempts_before).empty());  // no run was noted, so no box was made
    CHECK(labelled_boxes().empty());
    check_ended_clean();
}

// docs/hostile.md case 25 in a files run: what the program leaves behind cannot add to or change the outputs.
TEST_CASE("A process the program leaves behind is killed before the outputs are packed")
{
    char pattern[] = "/tmp/pybox-late-XXXXXX";
    const std::filesystem::path out = ::mkdtemp(pattern);
    const auto run = run_json(R"(import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(3)
    open("out/late.txt", "w").write("late")
    os._exit(0)
open("out/early.txt", "w").write("early")
)",
                              {"--out", out.string(), "--timeout", "5"});
    CHECK(run.process.exit_code == 0);
    const auto& outputs = run.receipt.at("files").at("outputs").as_array();
    REQUIRE(outputs.size() == 1);
    CHECK(outputs[0].at("name") == "early.txt");
    CHECK_FALSE(std::filesystem::exists(out / "late.txt"));
    // The run ended with its program, not with what it left behind (which writes 3 s in).
    CHECK(run_phase_s(run.receipt) < 3);
    std::filesystem::remove_all(out);
    check_ended_clean();
}
