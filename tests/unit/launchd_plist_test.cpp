#include "daemon/macos/launchd_plist.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <filesystem>

#include <catch2/catch.hpp>

using namespace pybox::macos;

TEST_CASE("The committed launchd agent is the one launchd_plist generates")
{
    CHECK(pybox::test::read_text(pybox::test::source_dir() / "packaging/macos/com.pybox.pyboxd.plist") == launchd_plist());
}

TEST_CASE("The launchd agent runs pyboxd by absolute path, restarts it only after a crash, and logs to the runtime folder")
{
    const auto plist = launchd_plist({"/Users/ada", "/.local/bin/pyboxd", "/.pybox/runtime/pyboxd.log"});
    CHECK_THAT(plist, Catch::Contains("<key>Label</key>\n  <string>com.pybox.pyboxd</string>"));
    CHECK_THAT(plist, Catch::Contains("<key>ProgramArguments</key>\n  <array>\n    <string>/Users/ada/.local/bin/pyboxd</string>\n  </array>"));
    CHECK_THAT(plist, Catch::Contains("<key>RunAtLoad</key>\n  <true/>"));
    CHECK_THAT(plist, Catch::Contains("<key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>"));
    CHECK_THAT(plist, Catch::Contains("<key>AbandonProcessGroup</key>\n  <true/>"));
    CHECK_THAT(plist, Catch::Contains("<key>StandardOutPath</key>\n  <string>/Users/ada/.pybox/runtime/pyboxd.log</string>"));
    CHECK_THAT(plist, Catch::Contains("<key>StandardErrorPath</key>\n  <string>/Users/ada/.pybox/runtime/pyboxd.log</string>"));
    CHECK_THAT(plist, Catch::Contains("<key>Umask</key>\n  <integer>63</integer>"));
    CHECK_THAT(plist, !Catch::Contains("EnvironmentVariables"));
    CHECK_THAT(plist, !Catch::Contains("@HOME@</string>"));
}

TEST_CASE("A home folder with XML's reserved characters is escaped in the launchd agent")
{
    const auto plist = launchd_plist({"/Users/R&D <lab>", "/.local/bin/pyboxd", "/.pybox/runtime/pyboxd.log"});
    CHECK_THAT(plist, Catch::Contains("<string>/Users/R&amp;D &lt;lab&gt;/.local/bin/pyboxd</string>"));
}

TEST_CASE("The launchd agent's comment holds no double hyphen, which XML comments forbid")
{
    const auto plist = launchd_plist();
    const auto start = plist.find("<!--");
    const auto end = plist.find("-->", start);
    REQUIRE(end != std::string::npos);
    CHECK(plist.substr(start + 4, end - start - 4).find("--") == std::string::npos);
}
