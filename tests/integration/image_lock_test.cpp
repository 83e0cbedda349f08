// The lock's SHA-256 per package, against the real archive and engine: a pinned version whose
// .deb has another SHA-256 stops `pybox setup` before anything is imported. The build it
// stops also shows `pybox setup`'s progress: plain lines, since stderr is a pipe here, and none
// with --quiet.
#include "tests/integration/harness.hpp"

#include "common/files.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <future>
#include <string>
#include <vector>

using namespace pybox;
using namespace pybox::test;
namespace fs = std::filesystem;

TEST_CASE("A package whose .deb does not match the lock's SHA-256 stops the build, naming it")
{
    // A copy of the fixture's stdlib recipe whose lock pins bash's version with a wrong digest.
    const fs::path recipes = runtime_home().string() + "-tampered-recipes";
    fs::remove_all(recipes);
    fs::create_directories(recipes / "stdlib");
    const fs::path source = runtime_home().string() + "-recipes/stdlib";
    fs::copy_file(source / "recipe", recipes / "stdlib" / "recipe");
    auto lock = read_file_capped(source / "lock", 256 * 1024);
    REQUIRE(lock.has_value());
    const auto bash = lock->find("\nbash=");
    REQUIRE(bash != std::string::npos);
    const auto digest = lock->find(' ', bash);
    const std::string real_digest = lock->substr(digest + 1, 64);
    const std::string wrong_digest(64, '0');
    lock->replace(digest + 1, 64, wrong_digest);
    REQUIRE(write_file_atomic(recipes / "stdlib" / "lock", *lock).has_value());

    // Two daemons on the same tampered recipe, one asked for progress and one --quiet: their
    // builds run at once (each a full mmdebstrap: about 20 s on an idle machine, a minute or more
    // under the suite's load). Neither may record anything.
    SideDaemon side("hashcheck", {{"recipes_dir", recipes.string()}});
    SideDaemon quiet_side("hashcheck-quiet", {{"recipes_dir", recipes.string()}});
    const auto records_of = [](const SideDaemon& daemon) {
        auto records = read_file_capped(daemon.home() / "images.json", 64 * 1024);
        REQUIRE(records.has_value());
        return *records;
    };
    const std::string records_before = records_of(side);
    const std::string quiet_records_before = records_of(quiet_side);
    const std::vector<std::string> setup{"setup", "--image", "stdlib"};
    const std::vector<std::string> quiet_setup{"setup", "--quiet", "--image", "stdlib"};
    auto shown = std::async(std::launch::async, [&] { return side.try_pybox(setup); });
    auto hidden = std::async(std::launch::async, [&] { return quiet_side.try_pybox(quiet_setup); });
    const auto run = finished(setup, shown.get());
    const auto quiet = finished(quiet_setup, hidden.get());
    INFO(run.error_output);
    CHECK(run.exit_code == 125);
    CHECK(run.error_output.find("does not match the SHA-256 pinned in images/stdlib/lock") != std::string::npos);
    CHECK(run.error_output.find("has SHA-256 " + real_digest + ", the lock says " + wrong_digest) != std::string::npos);
    CHECK(run.error_output.find("Nothing was imported") != std::string::npos);
    // The build took long enough for `pybox setup` to show its progress (GET /v1/setup/progress),
    // as whole lines: stderr is not a terminal.
    CHECK(run.error_output.find("pybox setup: stdlib: ") != std::string::npos);
    CHECK(run.error_output.find(" packages, ") != std::string::npos);
    CHECK(run.error_output.find(" downloaded, ") != std::string::npos);
    CHECK(run.error_output.find('\r') == std::string::npos);
    CHECK(run.error_output.find("\x1b[") == std::string::npos);
    INFO(quiet.error_output);
    CHECK(quiet.exit_code == 125);
    CHECK(quiet.error_output.find("has SHA-256 " + real_digest + ", the lock says " + wrong_digest) != std::string::npos);
    CHECK(quiet.error_output.find("pybox setup: ") == std::string::npos);
    CHECK(records_of(side) == records_before);
    CHECK(records_of(quiet_side) == quiet_records_before);
    fs::remove_all(recipes);
}
