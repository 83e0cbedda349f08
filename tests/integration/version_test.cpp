// `pybox --version` and `pybox version`: the client's version and the running daemon's, both
// the project's version and git revision (common/version.hpp), as every receipt names it; without a
// daemon, the client's line and why the daemon's is missing.
#include "common/version.hpp"
#include "tests/integration/harness.hpp"

#include <catch2/catch.hpp>

using namespace pybox::test;

TEST_CASE("pybox --version prints the client's and the daemon's version, as pybox version does")
{
    const auto flag = run_pybox({"--version"});
    INFO("stderr: " << flag.error_output);
    CHECK(flag.exit_code == 0);
    CHECK(flag.output.starts_with("pybox " + pybox::version() + " (API "));
    CHECK(flag.output.find("\npyboxd " + pybox::version() + " (API ") != std::string::npos);
    CHECK(run_pybox({"version"}).output == flag.output);
}

TEST_CASE("pybox --version without a daemon prints the client's version and says the daemon is not running")
{
    const std::filesystem::path empty_home = runtime_home().string() + "-no-daemon";
    std::filesystem::create_directories(empty_home);
    const auto run = run_pybox({"--version"}, "", {{"PYBOX_HOME", empty_home.string()}});
    CHECK(run.exit_code == 125);
    CHECK(run.output.starts_with("pybox " + pybox::version() + " (API "));
    CHECK(run.error_output.find("pyboxd is not running") != std::string::npos);
}

TEST_CASE("Every receipt names the version of the daemon that made it")
{
    const auto run = run_json("print(6*7)");
    CHECK(run.receipt.at("identity").at("daemon_version") == boost::json::value(pybox::version()));
}
