#include "daemon/macos/trusted_tools.hpp"
#include "common/process.hpp"
#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

using namespace pybox;
using namespace pybox::macos;
namespace fs = std::filesystem;

namespace {

constexpr unsigned k_user = 501;

constexpr unsigned k_staff = 20;
constexpr unsigned k_admin = 80;

FileFacts folder(unsigned mode = 0755, unsigned uid = 0, unsigned gid = 0)
{
    return {FileFacts::Kind::folder, mode, uid, gid, std::nullopt};
}
FileFacts file(unsigned mode = 0755, unsigned uid = k_user, unsigned gid = k_admin)
{
    return {FileFacts::Kind::regular_file, mode, uid, gid, std::nullopt};
}
FileFacts link(const std::string& target) { return {FileFacts::Kind::symbolic_link, 0755, k_user, k_admin, fs::path(target)}; }

// An Apple-silicon Homebrew install: /opt/homebrew owned by the user and writable by the admin
// group (as Homebrew's installer leaves it), bin/colima a link into the Cellar.
std::map<fs::path, FileFacts> homebrew()
{
    return {
        {"/", folder()},
        {"/opt", folder()},
        {"/opt/homebrew", folder(0775, k_user, k_admin)},
        {"/opt/homebrew/bin", folder(0775, k_user, k_admin)},
        {"/opt/homebrew/bin/colima", link("../Cellar/colima/0.10.1/bin/colima")},
        {"/opt/homebrew/Cellar", folder(0775, k_user, k_admin)},
        {"/opt/homebrew/Cellar/colima", folder(0775, k_user, k_admin)},
        {"/opt/homebrew/Cellar/colima/0.10.1", folder(0775, k_user, k_admin)},
        {"/opt/homebrew/Cellar/colima/0.10.1/bin", folder(0775, k_user, k_admin)},
        {"/opt/homebrew/Cellar/colima/0.10.1/bin/colima", file(0555)},
    };
}

FactsLookup lookup_in(const std::map<fs::path, FileFacts>& files)
{
    return [files](const fs::path& path) -> std::optional<FileFacts> {
        const auto found = files.find(path);
        if (found == files.end()) return std::nullopt;
        return found->second;
    };
}

}  // namespace

TEST_CASE("A Homebrew colima linked into its Cellar is trusted and run by its bin path")
{
    const auto tool = locate_tool("colima", k_user, lookup_in(homebrew()));
    REQUIRE(tool.has_value());
    CHECK(*tool == fs::path("/opt/homebrew/bin/colima"));
}

TEST_CASE("A tool in /usr/local/bin is found when /opt/homebrew/bin has none")
{
    const std::map<fs::path, FileFacts> files = {
        {"/", folder()}, {"/usr", folder()}, {"/usr/local", folder()}, {"/usr/local/bin", folder(0775, k_user, k_admin)},
        {"/usr/local/bin/docker", file(0755, 0)}};
    const auto tool = locate_tool("docker", k_user, lookup_in(files));
    REQUIRE(tool.has_value());
    CHECK(*tool == fs::path("/usr/local/bin/docker"));
}

TEST_CASE("A tool in neither trusted folder is missing, whatever $PATH says")
{
    const auto tool = locate_tool("colima", k_user, lookup_in({{"/", folder()}}));
    REQUIRE_FALSE(tool.has_value());
    CHECK(tool.error().code == "tool_missing");
    CHECK_THAT(tool.error().message, Catch::Contains("$PATH"));
}

TEST_CASE("A binary writable by group or others is refused")
{
    auto files = homebrew();
    files["/opt/homebrew/Cellar/colima/0.10.1/bin/colima"] = file(0775);
    const auto tool = locate_tool("colima", k_user, lookup_in(files));
    REQUIRE_FALSE(tool.has_value());
    CHECK(tool.error().code == "tool_untrusted");
    CHECK_THAT(tool.error().message, Catch::Contains("writable by group or others (mode 0775)"));
}

TEST_CASE("A folder writable by the admin group is trusted, a binary writable by it is not")
{
    auto files = homebrew();
    CHECK(locate_tool("colima", k_user, lookup_in(files)).has_value());
    files["/opt/homebrew/Cellar/colima/0.10.1/bin/colima"] = file(0775, k_user, k_admin);
    const auto tool = locate_tool("colima", k_user, lookup_in(files));
    REQUIRE_FALSE(tool.has_value());
    CHECK_THAT(tool.error().message, Catch::Contains("is writable by group or others (mode 0775)"));
}

TEST_CASE("A binary owned by another user is refused")
{
    auto files = homebrew();
    files["/opt/homebrew/Cellar/colima/0.10.1/bin/colima"] = file(0755, 502);
    const auto tool = locate_tool("colima", k_user, lookup_in(files));
    REQUIRE_FALSE(tool.has_value());
    CHECK_THAT(tool.error().message, Catch::Contains("belongs to uid 502, neither root nor you"));
}

TEST_CASE("A group-writable folder on the way to the binary is refused")
{
    SECTION("the trusted folder itself")
    {
        auto files = homebrew();
        files["/opt/homebrew/bin"] = folder(0775, k_user, k_staff);
        const auto tool = locate_tool("colima", k_user, lookup_in(files));
        REQUIRE_FALSE(tool.has_value());
        CHECK_THAT(tool.error().message, Catch::Contains("/opt/homebrew/bin is writable by group or others (mode 0775)"));
    }
    SECTION("a folder the link leads through")
    {
        auto files = homebrew();
        files["/opt/homebrew/Cellar/colima"] = folder(0777, k_user, k_admin);
        const auto tool = locate_tool("colima", k_user, lookup_in(files));
        REQUIRE_FALSE(tool.has_value());
        CHECK_THAT(tool.error().message, Catch::Contains("/opt/homebrew/Cellar/colima is writable by others (mode 0777)"));
    }
}

TEST_CASE("An untrusted tool in the first folder is refused, not passed over for the second")
{
    auto files = homebrew();
    files["/opt/homebrew/Cellar/colima/0.10.1/bin/colima"] = file(0777);
    files["/usr"] = folder();
    files["/usr/local"] = folder();
    files["/usr/local/bin"] = folder();
    files["/usr/local/bin/colima"] = file(0755, 0);
    const auto tool = locate_tool("colima", k_user, lookup_in(files));
    REQUIRE_FALSE(tool.has_value());
    CHECK(tool.error().code == "tool_untrusted");
}

TEST_CASE("A link loop, a folder in a link's path, and a non-executable file are refused")
{
    SECTION("a loop")
    {
        auto files = homebrew();
        files["/opt/homebrew/Cellar/colima/0.10.1/bin/colima"] = link("/opt/homebrew/bin/colima");
        const auto tool = locate_tool("colima", k_user, lookup_in(files));
        REQUIRE_FALSE(tool.has_value());
        CHECK_THAT(tool.error().message, Catch::Contains("more than 8 symbolic links"));
    }
    SECTION("a link among the folders")
    {
        auto files = homebrew();
        files["/opt/homebrew/Cellar/colima"] = link("/tmp/elsewhere");
        const auto tool = locate_tool("colima", k_user, lookup_in(files));
        REQUIRE_FALSE(tool.has_value());
        CHECK_THAT(tool.error().message, Catch::Contains("is not a real folder"));
    }
    SECTION("not executable")
    {
        auto files = homebrew();
        files["/opt/homebrew/Cellar/colima/0.10.1/bin/colima"] = file(0644);
        const auto tool = locate_tool("colima", k_user, lookup_in(files));
        REQUIRE_FALSE(tool.has_value());
        CHECK_THAT(tool.error().message, Catch::Contains("not executable"));
    }
}

TEST_CASE("file_facts reads kind, mode, owner and link target from the real file system")
{
    test::TempRuntime runtime;
    const auto bin = runtime.root / "bin";
    fs::create_directory(bin);
    fs::permissions(bin, fs::perms(0755));
    std::ofstream(bin / "colima") << "#!/bin/sh\n";
    fs::permissions(bin / "colima", fs::perms(0750));
    fs::create_symlink("colima", bin / "link");

    const auto dir_facts = file_facts(bin);
    REQUIRE(dir_facts.has_value());
    CHECK(dir_facts->kind == FileFacts::Kind::folder);
    CHECK(dir_facts->mode == 0755);
    CHECK(dir_facts->uid == current_uid());
    CHECK(dir_facts->gid == static_cast<unsigned>(::getgid()));

    const auto tool_facts = file_facts(bin / "colima");
    REQUIRE(tool_facts.has_value());
    CHECK(tool_facts->kind == FileFacts::Kind::regular_file);
    CHECK(tool_facts->mode == 0750);

    const auto link_facts = file_facts(bin / "link");
    REQUIRE(link_facts.has_value());
    CHECK(link_facts->kind == FileFacts::Kind::symbolic_link);
    CHECK(link_facts->link_target == fs::path("colima"));

    CHECK_FALSE(file_facts(bin / "missing").has_value());
}

TEST_CASE("check_tool with the real file system trusts a private file and refuses it once group-writable")
{
    test::TempRuntime runtime;
    const auto bin = runtime.root / "bin";
    fs::create_directory(bin);
    fs::permissions(bin, fs::perms(0755));
    std::ofstream(bin / "colima") << "#!/bin/sh\n";
    fs::permissions(bin / "colima", fs::perms(0755));
    // Only the folders below the temporary folder are judged here (/tmp itself is world-writable).
    const FactsLookup below_runtime = [&](const fs::path& path) -> std::optional<FileFacts> {
        if (path.string().size() < runtime.root.string().size()) return FileFacts{FileFacts::Kind::folder, 0755, 0, 0, {}};
        return file_facts(path);
    };
    CHECK(check_tool(bin, "colima", current_uid(), below_runtime).has_value());
    fs::permissions(bin / "colima", fs::perms(0775));
    const auto refused = check_tool(bin, "colima", current_uid(), below_runtime);
    REQUIRE_FALSE(refused.has_value());
    CHECK_THAT(refused.error().message, Catch::Contains("writable by group or others (mode 0775)"));
}
