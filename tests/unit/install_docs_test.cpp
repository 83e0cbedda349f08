// docs/install.md against packaging/: the .deb's Depends, the folders the install rules put the
// systemd units in, the sockets the units listen on and the group the postinst creates are the
// ones the page names.
#include "common/limits.hpp"
#include "common/paths.hpp"
#include "daemon/server/callers.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using pybox::test::read_text;

// The value of `set(NAME "value")` or `set(NAME value ...)` in packaging/CMakeLists.txt.
std::string cmake_value(const std::string& name)
{
    const std::string text = read_text(pybox::test::source_dir() / "packaging" / "CMakeLists.txt");
    std::smatch match;
    REQUIRE(std::regex_search(text, match, std::regex("set\\(" + name + " (?:\"([^\"]*)\"|([^\\s)]+))")));
    return match[1].matched ? match[1].str() : match[2].str();
}

}  // namespace

TEST_CASE("docs/install.md names every package the .deb depends on besides the shared libraries")
{
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "install.md");
    std::istringstream depends(cmake_value("CPACK_DEBIAN_PACKAGE_DEPENDS"));
    int count = 0;
    for (std::string package; std::getline(depends >> std::ws, package, ',');) {
        INFO("Depends: " << package);
        CHECK_THAT(doc, Catch::Contains("`" + package + "`"));
        ++count;
    }
    CHECK(count == 5);
}

TEST_CASE("docs/install.md names the folders the systemd units are installed in, each unit in them")
{
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "install.md");
    const std::string user = cmake_value("PYBOX_INSTALL_SYSTEMD_USERUNITDIR");
    const std::string system = cmake_value("PYBOX_INSTALL_SYSTEMD_SYSTEMUNITDIR");
    CHECK(user == "lib/systemd/user");
    CHECK(system == "lib/systemd/system");
    for (const auto& folder : {user, system})
        for (const char* unit : {"pyboxd.service", "pyboxd.socket"}) {
            INFO(folder << "/" << unit);
            CHECK_THAT(doc, Catch::Contains("`" + folder + "/" + unit + "`"));
        }
}

TEST_CASE("docs/install.md names the sockets, modes and group the socket units give")
{
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "install.md");
    const auto packaging = pybox::test::source_dir() / "packaging";
    const std::string user = read_text(packaging / "pyboxd.socket");
    const std::string system = read_text(packaging / "system" / "pyboxd.socket");
    CHECK_THAT(user, Catch::Contains("\nListenStream=%h/.pybox/runtime/pyboxd.sock\n") &&
                         Catch::Contains("\nSocketMode=0600\n") && Catch::Contains("\nDirectoryMode=0700\n"));
    CHECK_THAT(doc, Catch::Contains("`~/.pybox/runtime/pyboxd.sock` (0600, its folders created 0700)"));
    CHECK_THAT(system, Catch::Contains("\nListenStream=/run/pybox/pyboxd.sock\n") &&
                           Catch::Contains("\nSocketUser=root\n") && Catch::Contains("\nSocketGroup=pybox\n") &&
                           Catch::Contains("\nSocketMode=0660\n") && Catch::Contains("\nDirectoryMode=0755\n"));
    CHECK_THAT(doc, Catch::Contains("`/run/pybox/pyboxd.sock`, owned\nby root and the group `pybox`, mode 0660, in a folder made 0755"));
}

TEST_CASE("The .deb's postinst creates the group the system socket belongs to, as docs/install.md says")
{
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "install.md");
    CHECK(cmake_value("CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA") == "${CMAKE_CURRENT_SOURCE_DIR}/debian/postinst");
    const std::string postinst = read_text(pybox::test::source_dir() / "packaging" / "debian" / "postinst");
    CHECK_THAT(postinst, Catch::Contains("addgroup --system pybox"));
    CHECK_THAT(doc, Catch::Contains("`addgroup --system pybox`"));
}

TEST_CASE("docs/install.md's system mode states the paths, group and queue share the code defines")
{
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "install.md");
    const auto system_mode = doc.substr(doc.find("## System mode"));
    CHECK_THAT(system_mode, Catch::Contains(std::string("`") + pybox::k_system_runtime + "`") &&
                                Catch::Contains(std::string("`") + pybox::k_system_socket + "`") &&
                                Catch::Contains(std::string("group `") + pybox::daemon::k_system_group + "`"));
    CHECK_THAT(system_mode, Catch::Contains("one user holds at most " +
                                            std::to_string(pybox::limits::k_max_waiting_runs_per_user) + " of the " +
                                            std::to_string(pybox::limits::k_max_waiting_runs) + " places in line"));
}
