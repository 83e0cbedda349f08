// Runs that move files: the rules for names and sets (proto/files), the run request's "files",
// the answer's two shapes, the split of stdout at the helper's marker, and the reading of the
// helper's report (daemon/run/files_report).
#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "daemon/engine/marker_splitter.hpp"
#include "daemon/run/files_helper.hpp"
#include "daemon/run/files_report.hpp"
#include "proto/files.hpp"
#include "proto/run_answer.hpp"
#include "proto/run_request.hpp"
#include "util/text.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using pybox::proto::FileContent;
using pybox::proto::file_name_problem;

pybox::Expected<void> check(const std::vector<FileContent>& files)
{
    return pybox::proto::check_file_set(files, {64, 8 * 1024 * 1024}, "input_files_invalid", "input");
}

std::vector<FileContent> named(std::initializer_list<std::string> names)
{
    std::vector<FileContent> files;
    for (const auto& name : names) files.push_back({name, "x"});
    return files;
}

}  // namespace

TEST_CASE("File names are relative paths without dot parts, control bytes or excess length", "[files]")
{
    for (const std::string& good : std::vector<std::string>{"a", "data.csv", "sub/dir/x.txt", "é.txt", "a b", std::string(255, 'n')})
        CHECK(file_name_problem(good).empty());
    for (const std::string& bad : {std::string(), std::string("/etc/passwd"), std::string(".."), std::string("a/../b"),
                                  std::string("./a"), std::string("a//b"), std::string("a/"), std::string("a\nb"),
                                  std::string("a\0b", 3), std::string("a\tb"), std::string(256, 'n'), std::string("\xff")})
        CHECK_FALSE(file_name_problem(bad).empty());
}

TEST_CASE("A set of files refuses duplicates, a file beside its own folder, and the caps", "[files]")
{
    CHECK(check(named({"a", "b/c", "b/d"})).has_value());
    CHECK(check(named({"a", "a"})).error().message.find("twice") != std::string::npos);
    CHECK(check(named({"a", "a/b"})).error().message.find("also a folder") != std::string::npos);
    CHECK(check(named({"x/a/b", "x/a"})).error().code == "input_files_invalid");
    std::vector<FileContent> many;
    for (int i = 0; i < 65; ++i) many.push_back({"f" + std::to_string(i), ""});
    CHECK(check(many).error().message.find("At most 64") != std::string::npos);
    many.pop_back();
    CHECK(check(many).has_value());
    std::vector<FileContent> big{{"a", std::string(8 * 1024 * 1024, 'x')}};
    CHECK(check(big).has_value());
    big[0].bytes.push_back('x');
    CHECK(check(big).error().message.find("8388609 bytes") != std::string::npos);
}

TEST_CASE("A run request carries files and refuses bad ones before anything runs", "[files]")
{
    pybox::proto::RunRequest request;
    request.source = "print(1)";
    request.files = pybox::proto::RunRequest::Files{{{"data/a.csv", std::string("a\0b", 3)}}, true};
    const auto parsed = pybox::proto::parse_run_request(pybox::proto::serialize_run_request(request));
    REQUIRE(parsed.has_value());
    CHECK(parsed->request().files == request.files);
    CHECK_FALSE(pybox::proto::parse_run_request(R"({"source":"x"})")->request().files.has_value());

    const auto code_of = [](std::string_view body) { return pybox::proto::parse_run_request(body).error().code; };
    CHECK(code_of(R"({"source":"x","files":{"inputs":[{"name":"../a","base64":"eA=="}]}})") == "input_files_invalid");
    CHECK(code_of(R"({"source":"x","files":{"inputs":[{"name":"out","base64":"eA=="}]}})") == "input_files_invalid");
    CHECK(code_of(R"({"source":"x","files":{"inputs":[{"name":"out/a","base64":"eA=="}]}})") == "input_files_invalid");
    CHECK(code_of(R"({"source":"x","files":{"inputs":[{"name":"a","base64":"eA="}]}})") == "invalid_request");
    CHECK(code_of(R"({"source":"x","files":{"inputs":[{"name":"a"}]}})") == "invalid_request");
    CHECK(code_of(R"({"source":"x","files":{"outputs":"yes"}})") == "invalid_request");
    CHECK(code_of(R"({"source":"x","files":{"more":1}})") == "invalid_request");
    std::string many = R"({"source":"x","files":{"inputs":[)";
    for (int i = 0; i < 65; ++i) many += std::string(i ? "," : "") + R"({"name":"f)" + std::to_string(i) + R"(","base64":""})";
    CHECK(code_of(many + "]}}") == "input_files_invalid");
}

TEST_CASE("The answer is the receipt alone without files, and receipt plus outputs with them", "[files]")
{
    pybox::proto::RunAnswer plain;
    CHECK(pybox::proto::to_json(plain).as_object().contains("schema_version"));

    pybox::proto::RunAnswer with_files;
    with_files.receipt.files = pybox::proto::FilesRecord{};
    with_files.outputs = {{"plot.png", std::string("\x89PNG\0", 5)}};
    const auto document = pybox::proto::to_json(with_files);
    REQUIRE(document.as_object().contains("outputs"));
    auto tampered = document;
    tampered.as_object()["outputs"].as_array()[0].as_object()["name"] = "../../x";
    const auto refused = pybox::proto::run_answer_from_json(tampered, pybox::util::ReadMode::tolerant, true);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "invalid_answer");
}

TEST_CASE("The marker splits stdout wherever chunks break, with bounded memory", "[files]")
{
    const std::string marker = "\n<pybox-files-report 0123456789abcdef>\n";
    const std::string program = "out\n<pybox-files-report 0123\n<pybox-files-report 0123456789abcdef\n";
    const std::string stream = program + marker + "{\"report\":1}";
    for (std::size_t chunk = 1; chunk <= stream.size(); ++chunk) {
        pybox::engine::MarkerSplitter split(marker, 1024);
        std::string before;
        for (std::size_t at = 0; at < stream.size(); at += chunk) split.feed(std::string_view(stream).substr(at, chunk), before);
        split.finish(before);
        INFO(chunk);
        CHECK(before == program);
        CHECK(split.found());
        CHECK(split.tail() == "{\"report\":1}");
    }
    pybox::engine::MarkerSplitter absent(marker, 4);
    std::string before;
    absent.feed("abc\n<pybox-files", before);
    absent.finish(before);
    CHECK_FALSE(absent.found());
    CHECK(before == "abc\n<pybox-files");
    pybox::engine::MarkerSplitter capped(marker, 4);
    capped.feed(marker + "123456", before);
    CHECK(capped.tail() == "1234");
    CHECK(capped.tail_truncated());
}

namespace {

using pybox::daemon::read_files_report;

pybox::proto::RunRequest::Files sent_files()
{
    return {{{"data.csv", "a,b\n1,2\n"}}, true};
}

json::object good_report()
{
    const std::string png = "\x89PNG";
    return json::object{
        {"inputs", json::array{json::object{{"name", "data.csv"}, {"bytes", 8}, {"sha256", pybox::sha256_hex("a,b\n1,2\n")}}}},
        {"outputs", json::array{json::object{{"name", "plot.png"},
                                             {"bytes", png.size()},
                                             {"sha256", pybox::sha256_hex(png)},
                                             {"base64", pybox::util::base64_encode(png)}}}},
        {"skipped", json::array{json::object{{"name", "link"}, {"reason", "symlink"}}}},
        {"skipped_unlisted", 0},
        {"errors", json::array{}}};
}

pybox::daemon::FilesOutcome read(const json::value& report)
{
    const std::string text = json::serialize(report);
    return read_files_report({text, false}, sent_files(), "missing");
}

}  // namespace

TEST_CASE("A sound report returns its outputs and lists inputs, outputs and skipped entries", "[files]")
{
    const auto outcome = read(good_report());
    CHECK(outcome.record.errors.empty());
    REQUIRE(outcome.outputs.size() == 1);
    CHECK(outcome.outputs[0].bytes == "\x89PNG");
    CHECK(outcome.record.outputs[0].name == "plot.png");
    CHECK(outcome.record.inputs[0].sha256 == pybox::sha256_hex("a,b\n1,2\n"));
    CHECK(outcome.record.skipped[0].reason == "symlink");
    CHECK(outcome.record.working_folder == "/tmp/work");
}

TEST_CASE("A report that lies or breaks a rule returns no output and says why", "[files]")
{
    const auto refused = [](const json::value& report) {
        const auto outcome = read(report);
        CHECK(outcome.outputs.empty());
        CHECK(outcome.record.outputs.empty());
        REQUIRE(outcome.record.errors.size() == 1);
        CHECK(outcome.record.inputs.size() == 1);  // what was sent is still listed
        return outcome.record.errors[0];
    };
    auto report = good_report();
    report["outputs"].as_array()[0].as_object()["sha256"] = std::string(64, '0');
    CHECK(refused(report).find("does not match") != std::string::npos);
    report = good_report();
    report["outputs"].as_array()[0].as_object()["name"] = "../../etc/x";
    CHECK(refused(report).find("'..'") != std::string::npos);
    report = good_report();
    report["inputs"] = json::array{};
    CHECK(refused(report).find("inputs are not the ones sent") != std::string::npos);
    report = good_report();
    report["skipped"].as_array()[0].as_object()["reason"] = "because";
    CHECK(refused(report).find("unknown reason") != std::string::npos);
    report = good_report();
    report["extra"] = 1;
    CHECK(refused(report).find("not a known field") != std::string::npos);
    report = good_report();
    report["outputs"].as_array().push_back(report["outputs"].as_array()[0]);
    CHECK(refused(report).find("twice") != std::string::npos);

    const auto missing = read_files_report({std::nullopt, false}, sent_files(), "The box was killed at the deadline.");
    CHECK(missing.record.errors == std::vector<std::string>{"The box was killed at the deadline."});
    const auto cut = read_files_report({std::string_view("{"), true}, sent_files(), "missing");
    CHECK(cut.record.errors[0].find("larger than") != std::string::npos);
    const auto duplicate = read_files_report({std::string_view(R"({"errors":[],"errors":[]})"), false}, sent_files(), "");
    CHECK(duplicate.record.errors[0].find("cannot be read") != std::string::npos);
}

TEST_CASE("Outputs are listed but not returned when the request did not ask for them", "[files]")
{
    auto sent = sent_files();
    sent.outputs = false;
    const std::string text = json::serialize(good_report());
    const auto outcome = read_files_report({text, false}, sent, "missing");
    CHECK(outcome.outputs.empty());
    CHECK(outcome.record.outputs.size() == 1);
}

TEST_CASE("The files helper's command runs its fixed text, whose SHA-256 the receipt states", "[files]")
{
    const auto command = pybox::daemon::files_box_command(2.0);
    REQUIRE(command.size() == 10);
    CHECK(command[4] == "python3");
    CHECK(command[8] == "-c");
    CHECK(command[9] == pybox::daemon::files_helper_text());
    CHECK(pybox::daemon::files_helper_sha256() == pybox::sha256_hex(command[9]));
    const auto marker = pybox::daemon::new_files_marker();
    CHECK(marker != pybox::daemon::new_files_marker());
    pybox::proto::RunRequest request;
    request.source = "print(1)";
    request.files = sent_files();
    const auto input = json::parse(pybox::daemon::files_helper_input(request, marker));
    CHECK(input.at("marker") == marker.c_str());
    CHECK(input.at("inputs").at(0).at("name") == "data.csv");
}
