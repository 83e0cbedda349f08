// docs/install.md against packaging/CMakeLists.txt: the .deb's Depends and the folders the install
// rules use are the ones the page names.
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
    const std::string text = read_text(fs::path(PYBOX_SOURCE_DIR) / "packaging" / "CMakeLists.txt");
    std::smatch match;
    REQUIRE(std::regex_search(text, match, std::regex("set\\(" + name + " (?:\"([^\"]*)\"|([^\\s)]+))")));
    return match[1].matched ? match[1].str() : match[2].str();
}

}  // namespace

TEST_CASE("docs/install.md names every package the .deb depends on besides the shared libraries")
{
    const std::string doc = read_text(fs::path(PYBOX_SOURCE_DIR) / "docs" / "install.md");
    std::istringstream depends(cmake_value("CPACK_DEBIAN_PACKAGE_DEPENDS"));
    int count = 0;
    for (std::string package; std::getline(depends >> std::ws, package, ',');) {
        INFO("Depends: " << package);
        CHECK_THAT(doc, Catch::Contains("`" + package + "`"));
        ++count;
    }
    CHECK(count == 4);
}

TEST_CASE("docs/install.md names the folder the systemd unit is installed in")
{
    const std::string doc = read_text(fs::path(PYBOX_SOURCE_DIR) / "docs" / "install.md");
    const std::string folder = cmake_value("PYBOX_INSTALL_SYSTEMD_USERUNITDIR");
    CHECK(folder == "lib/systemd/user");
    CHECK_THAT(doc, Catch::Contains("`" + folder + "/pyboxd.service`"));
}
