#include "daemon/images/mmdebstrap_build.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace pybox::images;

namespace {

const std::string k_sha_a(64, 'a');
const std::string k_sha_b(64, 'b');
const Lock k_pins{{"bash", {"5.2.15-2+b13", k_sha_a}}, {"python3", {"3.11.2-1+b1", k_sha_b}}};

BuildRequest sample_request(bool pinned)
{
    Recipe recipe;
    recipe.variant = "essential";
    recipe.sources = {{"http://deb.debian.org/debian", "bookworm", {"main"}},
                      {"http://deb.debian.org/debian-security", "bookworm-security", {"main", "contrib"}}};
    recipe.includes = {"python3"};
    recipe.source_date_epoch = 1700000000;
    std::optional<Lock> pins;
    if (pinned) {
        pins = k_pins;
    }
    return BuildRequest{"stdlib", recipe, pins, "/run/x/build/stdlib.tar", "/run/x/build", "images/stdlib/lock"};
}

bool has_arg_starting(const std::vector<std::string>& argv, const std::string& prefix)
{
    return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.starts_with(prefix); });
}

const std::string k_report =
    "I: running --customize-hook in shell: sh -c 'pybox-installed ${db:Status-Abbrev}' print(\"pybox-python-ok\")\n"
    "pybox-deb bash=5.2.15-2+b13 " + k_sha_a + "\n"
    "pybox-deb python3=3.11.2-1+b1 " + k_sha_b + "\n"
    "pybox-deb libunused=1.0 " + k_sha_b + "\n"
    "pybox-installed ii bash=5.2.15-2+b13\n"
    "pybox-installed ii python3=3.11.2-1+b1\n"
    "pybox-python-ok\n"
    "I: success in 20.1 seconds\n";

}  // namespace

TEST_CASE("An unpinned build passes the recipe to mmdebstrap by absolute path")
{
    const auto argv = mmdebstrap_argv(sample_request(false));
    REQUIRE(argv.size() == 11);
    CHECK(argv[0] == "/usr/bin/mmdebstrap");
    CHECK(argv[1] == "--variant=essential");
    CHECK(argv[2] == "--format=tar");
    CHECK(argv[3] == "--aptopt=APT::Sandbox::User \"root\"");
    CHECK(argv[4] == "--skip=essential/unlink");  // the customize hook hashes every .deb
    CHECK(argv[5] == "--include=python3");
    CHECK_FALSE(has_arg_starting(argv, "--setup-hook="));
    CHECK(argv[6].starts_with("--customize-hook="));
    CHECK(argv[6].find("sha256sum") != std::string::npos);
    CHECK(argv[7].empty());  // every suite counts for the essential set
    CHECK(argv[8] == "/run/x/build/stdlib.tar");
    CHECK(argv[9] == "deb http://deb.debian.org/debian bookworm main");
    CHECK(argv[10] == "deb http://deb.debian.org/debian-security bookworm-security main contrib");
}

TEST_CASE("A pinned build includes and pins every locked version")
{
    const auto argv = mmdebstrap_argv(sample_request(true));
    CHECK(argv[5] == "--include=python3,bash=5.2.15-2+b13,python3=3.11.2-1+b1");
    REQUIRE(has_arg_starting(argv, "--setup-hook="));
    const auto hook = *std::find_if(argv.begin(), argv.end(),
                                    [](const std::string& a) { return a.starts_with("--setup-hook="); });
    CHECK(hook.find("'Package: bash' 'Pin: version 5.2.15-2+b13' 'Pin-Priority: 1001'") != std::string::npos);
    CHECK(hook.find("'Package: python3' 'Pin: version 3.11.2-1+b1' 'Pin-Priority: 1001'") != std::string::npos);
}

TEST_CASE("The build report yields the installed packages with the SHA-256 of their .deb")
{
    const auto installed = parse_build_report(k_report);
    REQUIRE(installed.has_value());
    CHECK(*installed == k_pins);
}

TEST_CASE("A build report without the .deb of an installed package is a failed build")
{
    std::string report = k_report;
    report.erase(report.find("pybox-deb bash"), report.find("pybox-deb python3") - report.find("pybox-deb bash"));
    const auto installed = parse_build_report(report);
    REQUIRE_FALSE(installed.has_value());
    CHECK(installed.error().code == "image_build_failed");
    CHECK(installed.error().message.find("bash=5.2.15-2+b13") != std::string::npos);
}

TEST_CASE("A build report with an unreadable or contradictory .deb line is a failed build")
{
    for (const std::string& bad : std::vector<std::string>{"pybox-deb bash=5.2.15-2+b13\n", "pybox-deb bash=5.2.15-2+b13 " + k_sha_a + "x\n",
                                  "pybox-deb =5.2 " + k_sha_a + "\n", "pybox-deb bash=5.2.15-2+b13 " + k_sha_b + "\n"}) {
        const auto installed = parse_build_report(bad + k_report);
        REQUIRE_FALSE(installed.has_value());
        CHECK(installed.error().code == "image_build_failed");
    }
}

TEST_CASE("A build report without a working python3 is a failed build")
{
    std::string report = k_report;
    report.erase(report.find("pybox-python-ok\n"), 16);
    const auto installed = parse_build_report(report);
    REQUIRE_FALSE(installed.has_value());
    CHECK(installed.error().code == "image_build_failed");
}

TEST_CASE("A build report with a half-installed package is a failed build")
{
    std::string report = k_report;
    report.replace(report.find("ii bash"), 3, "iF ");
    const auto installed = parse_build_report(report);
    REQUIRE_FALSE(installed.has_value());
    CHECK(installed.error().message.find("bash") != std::string::npos);
}

TEST_CASE("A build report with no packages is a failed build")
{
    CHECK_FALSE(parse_build_report("pybox-python-ok\n").has_value());
    CHECK_FALSE(parse_build_report("pybox-installed ii bash=\npybox-python-ok\n").has_value());
}

TEST_CASE("apt's missing-version error names the pinned package")
{
    const auto missing = find_missing_pin("W: x\nE: Version '3.11.2-1+b1' for 'python3' was not found\nE: exit\n");
    REQUIRE(missing.has_value());
    CHECK(missing->package == "python3");
    CHECK(missing->version == "3.11.2-1+b1");
    CHECK_FALSE(find_missing_pin("E: Unable to locate package python4\n").has_value());
}

TEST_CASE("A build that differs from the lock says what differs and how to refresh")
{
    CHECK_FALSE(compare_with_lock(k_pins, k_pins, "images/stdlib/lock").has_value());
    const Lock built{{"bash", {"5.2.15-2+b14", k_sha_a}}, {"libx", {"1.0", k_sha_a}}};
    const auto mismatch = compare_with_lock(k_pins, built, "images/stdlib/lock");
    REQUIRE(mismatch.has_value());
    CHECK(mismatch->code == "lock_outdated");
    CHECK(mismatch->message.find("bash is 5.2.15-2+b14, not 5.2.15-2+b13") != std::string::npos);
    CHECK(mismatch->message.find("python3=3.11.2-1+b1 is missing") != std::string::npos);
    CHECK(mismatch->message.find("libx=1.0 is not in the lock") != std::string::npos);
    CHECK(mismatch->message.find("pybox setup --refresh-lock") != std::string::npos);
}

TEST_CASE("A package with the pinned version but another SHA-256 stops the build with its name")
{
    Lock built = k_pins;
    built.at("python3").sha256 = k_sha_a;
    const auto mismatch = compare_with_lock(k_pins, built, "images/data/lock");
    REQUIRE(mismatch.has_value());
    CHECK(mismatch->code == "package_hash_mismatch");
    CHECK(mismatch->message.find("python3=3.11.2-1+b1 has SHA-256 " + k_sha_a + ", the lock says " + k_sha_b) !=
          std::string::npos);
    CHECK(mismatch->message.find("images/data/lock") != std::string::npos);
    CHECK(mismatch->message.find("Nothing was imported") != std::string::npos);
}
