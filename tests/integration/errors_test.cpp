// Bad input gets a clear error, exit 125, and creates nothing.
#include "tests/integration/harness.hpp"

#include "common/files.hpp"

#include <catch2/catch.hpp>

using namespace pybox;
using namespace pybox::test;

namespace {

void expect_refused(const std::vector<std::string>& args, const std::string& input, const std::string& words)
{
    const auto before = labelled_boxes().size();
    const auto run = run_pybox(args, input);
    INFO("stderr: " << run.error_output);
    CHECK(run.exit_code == 125);
    CHECK(run.output.empty());
    CHECK(run.error_output.find(words) != std::string::npos);
    CHECK(labelled_boxes().size() == before);
}

}  // namespace

TEST_CASE("A missing program file is refused")
{
    expect_refused({"exec", "/nonexistent/program.py"}, "", "/nonexistent/program.py");
}

TEST_CASE("A program over 65,536 bytes is refused")
{
    expect_refused({"exec", "-"}, std::string(65'537, '#'), "65536");
}

TEST_CASE("A program of exactly 65,536 bytes runs")
{
    std::string program = "print('edge')\n";
    program += std::string(65'536 - program.size(), '#');
    const auto run = run_pybox({"exec", "-"}, program);
    CHECK(run.exit_code == 0);
    CHECK(run.output == "edge\n");
}

TEST_CASE("Timeouts of 0 and 31 seconds are refused")
{
    expect_refused({"exec", "-", "--timeout", "0"}, "print(1)\n", "timeout");
    expect_refused({"exec", "-", "--timeout", "31"}, "print(1)\n", "timeout");
}

TEST_CASE("An output limit of 0 is refused")
{
    expect_refused({"exec", "-", "--output-limit", "0"}, "print(1)\n", "output");
}

TEST_CASE("An unknown image is refused")
{
    expect_refused({"exec", "-", "--image", "nosuchimage"}, "print(1)\n", "nosuchimage");
}

TEST_CASE("A daemon that is not running is reported with the command to start it")
{
    const std::filesystem::path empty_home = runtime_home().string() + "-no-daemon";
    std::filesystem::create_directories(empty_home);
    const auto run = run_pybox({"exec", "-"}, "print(1)\n", {{"PYBOX_HOME", empty_home.string()}});
    CHECK(run.exit_code == 125);
    CHECK(run.error_output.find("pyboxd is not running") != std::string::npos);
    CHECK(run.error_output.find("pyboxd") != std::string::npos);
}

TEST_CASE("A changed recipe lock makes the run refuse the image until setup runs again")
{
    const auto lock = runtime_home() / "recipes" / "stdlib.lock";
    auto original = read_file_capped(lock, 1 << 20);
    REQUIRE(original.has_value());
    REQUIRE(write_file_atomic(lock, *original + "# tampered\n").has_value());
    const auto before = labelled_boxes().size();
    const auto run = run_pybox({"exec", "-"}, "print(1)\n");
    REQUIRE(write_file_atomic(lock, *original).has_value());
    CHECK(run.exit_code == 125);
    CHECK(run.error_output.find("setup") != std::string::npos);
    CHECK(labelled_boxes().size() == before);
    CHECK(run_pybox({"exec", "-"}, "print(1)\n").exit_code == 0);
}
