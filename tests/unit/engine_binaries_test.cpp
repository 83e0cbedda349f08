// Linux's check of what PyBox runs as root (dockerd, containerd, containerd-shim-runc-v2, runc,
// mmdebstrap): common/trusted_binary's rule with root as the only owner, over maps of file facts
// shaped like Debian, and over a real temporary tree.
#include "common/process.hpp"
#include "common/trusted_binary.hpp"
#include "daemon/images/mmdebstrap_build.hpp"
#include "daemon/vm/engine_binaries.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"
#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

using namespace pybox;
namespace fs = std::filesystem;

namespace engine_binaries_test {

constexpr unsigned k_user = 1000;
constexpr unsigned k_staff = 50;

FileFacts dir_facts(unsigned mode = 0755, unsigned uid = 0, unsigned gid = 0)
{
    return {FileFacts::Kind::folder, mode, uid, gid, std::nullopt};
}
FileFacts exe_facts(unsigned mode = 0755, unsigned uid = 0, unsigned gid = 0)
{
    return {FileFacts::Kind::regular_file, mode, uid, gid, std::nullopt};
}
FileFacts link_facts(const std::string& target) { return {FileFacts::Kind::symbolic_link, 0777, 0, 0, fs::path(target)}; }

// Debian 12 with docker.io, containerd and runc installed: /sbin and /bin are links into /usr.
std::map<fs::path, FileFacts> debian()
{
    return {
        {"/", dir_facts()},
        {"/usr", dir_facts()},
        {"/usr/sbin", dir_facts()},
        {"/usr/bin", dir_facts()},
        {"/sbin", link_facts("usr/sbin")},
        {"/bin", link_facts("usr/bin")},
        {"/usr/sbin/dockerd", exe_facts()},
        {"/usr/sbin/runc", exe_facts()},
        {"/usr/bin/containerd", exe_facts()},
        {"/usr/bin/containerd-shim-runc-v2", exe_facts()},
        {"/usr/bin/mmdebstrap", exe_facts()},
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

}  // namespace engine_binaries_test

using namespace engine_binaries_test;

TEST_CASE("Debian's dockerd and the containerd, shim and runc it finds in PyBox's PATH are trusted, in that order")
{
    const auto checked = vm::check_engine_binaries("/usr/sbin/dockerd", lookup_in(debian()));
    REQUIRE(checked.has_value());
    CHECK(*checked == std::vector<fs::path>{"/usr/sbin/dockerd", "/usr/bin/containerd", "/usr/bin/containerd-shim-runc-v2",
                                            "/usr/sbin/runc"});
    CHECK(vm::engine_path_variable() == "/usr/sbin:/usr/bin:/sbin:/bin");
}

TEST_CASE("The helper dockerd would run is the first in PyBox's PATH, and an untrusted one there is refused")
{
    auto files = debian();
    files["/usr/sbin/containerd"] = exe_facts(0755, k_user);  // before /usr/bin in the PATH
    const auto checked = vm::check_engine_binaries("/usr/sbin/dockerd", lookup_in(files));
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == "tool_untrusted");
    CHECK_THAT(checked.error().message,
               Catch::Contains("PyBox does not run /usr/sbin/containerd: the file /usr/sbin/containerd belongs to uid 1000, not root."));
}

TEST_CASE("A runc writable by its group is refused, with the path and the mode")
{
    auto files = debian();
    files["/usr/sbin/runc"] = exe_facts(0775, 0, k_staff);
    const auto checked = vm::check_engine_binaries("/usr/sbin/dockerd", lookup_in(files));
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == "tool_untrusted");
    CHECK_THAT(checked.error().message, Catch::Contains("/usr/sbin/runc is writable by group or others (mode 0775)"));
}

TEST_CASE("A dockerd in a group-writable folder is refused on Linux, whatever the group")
{
    auto files = debian();
    files["/usr/local"] = dir_facts(02775, 0, k_staff);  // Debian's old /usr/local, writable by staff
    files["/usr/local/bin"] = dir_facts(02775, 0, k_staff);
    files["/usr/local/bin/dockerd"] = exe_facts();
    files["/"] = dir_facts(0775, 0, 0);  // group root: tolerated on macOS (wheel), never on Linux
    const auto root_group = vm::check_engine_binaries("/usr/sbin/dockerd", lookup_in(files));
    REQUIRE_FALSE(root_group.has_value());
    CHECK_THAT(root_group.error().message, Catch::Contains("the folder / is writable by group or others (mode 0775)"));
    files["/"] = dir_facts();
    const auto staff = vm::check_engine_binaries("/usr/local/bin/dockerd", lookup_in(files));
    REQUIRE_FALSE(staff.has_value());
    CHECK_THAT(staff.error().message,
               Catch::Contains("PyBox does not run /usr/local/bin/dockerd: the folder /usr/local is writable by group or others (mode 02775)."));
}

TEST_CASE("A dockerd linked to a file under a folder someone else may change is refused through the link")
{
    auto files = debian();
    files["/usr/sbin/dockerd"] = link_facts("/opt/docker/bin/dockerd");
    files["/opt"] = dir_facts();
    files["/opt/docker"] = dir_facts(0755, k_user, k_user);
    files["/opt/docker/bin"] = dir_facts();
    files["/opt/docker/bin/dockerd"] = exe_facts();
    const auto checked = vm::check_engine_binaries("/usr/sbin/dockerd", lookup_in(files));
    REQUIRE_FALSE(checked.has_value());
    CHECK_THAT(checked.error().message,
               Catch::Contains("PyBox does not run /usr/sbin/dockerd: the folder /opt/docker belongs to uid 1000, not root."));
    files["/opt/docker"] = dir_facts();
    CHECK(vm::check_engine_binaries("/usr/sbin/dockerd", lookup_in(files)).has_value());
}

TEST_CASE("A binary named through a folder that is a link is refused: it is named by its real folder")
{
    const auto checked = check_trusted_binary("/sbin/dockerd", root_only_rule(), lookup_in(debian()));
    REQUIRE_FALSE(checked.has_value());
    CHECK_THAT(checked.error().message, Catch::Contains("/sbin is not a real folder"));
}

TEST_CASE("A helper in no folder of PyBox's PATH fails the start and names the PATH")
{
    auto files = debian();
    files.erase("/usr/bin/containerd-shim-runc-v2");
    const auto checked = vm::check_engine_binaries("/usr/sbin/dockerd", lookup_in(files));
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == "engine_start_failed");
    CHECK_THAT(checked.error().message, Catch::Contains("containerd-shim-runc-v2 is in none of /usr/sbin:/usr/bin:/sbin:/bin"));
}

TEST_CASE("mmdebstrap is checked under the same rule at its fixed path")
{
    CHECK(check_trusted_binary(images::k_mmdebstrap, root_only_rule(), lookup_in(debian())).has_value());
    auto files = debian();
    files["/usr/bin/mmdebstrap"] = exe_facts(0757);
    const auto refused = check_trusted_binary(images::k_mmdebstrap, root_only_rule(), lookup_in(files));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "tool_untrusted");
    CHECK_THAT(refused.error().message, Catch::Contains("/usr/bin/mmdebstrap is writable by group or others (mode 0757)"));
}

TEST_CASE("On the real file system, a group-writable folder, a file root does not own and a link to either are refused")
{
    test::TempRuntime runtime;
    const auto bin = runtime.root / "bin";
    const auto shared = runtime.root / "shared";
    for (const auto& dir : {bin, shared}) fs::create_directory(dir);
    fs::permissions(bin, fs::perms(0755));
    fs::permissions(shared, fs::perms(0775));
    for (const auto& tool : {bin / "tool", shared / "tool"}) {
        std::ofstream(tool) << "#!/bin/sh\n";
        fs::permissions(tool, fs::perms(0755));
    }
    fs::create_symlink(shared / "tool", bin / "to-shared");
    // The temporary folder's own ancestors (/tmp is world-writable) stand in as root's 0755 folders,
    // and the tree's owner, whoever runs the test, stands in as root.
    const unsigned me = current_uid();
    const FactsLookup as_root = [&](const fs::path& path) -> std::optional<FileFacts> {
        if (path.string().size() < runtime.root.string().size()) return dir_facts();
        auto facts = file_facts(path);
        if (facts && facts->uid == me) facts->uid = 0;
        return facts;
    };
    CHECK(check_trusted_binary(bin / "tool", root_only_rule(), as_root).has_value());

    const auto in_shared = check_trusted_binary(shared / "tool", root_only_rule(), as_root);
    REQUIRE_FALSE(in_shared.has_value());
    CHECK_THAT(in_shared.error().message, Catch::Contains(shared.string() + " is writable by group or others (mode 0775)"));

    const auto through_link = check_trusted_binary(bin / "to-shared", root_only_rule(), as_root);
    REQUIRE_FALSE(through_link.has_value());
    CHECK_THAT(through_link.error().message, Catch::Contains("PyBox does not run " + (bin / "to-shared").string() + ": the folder " +
                                                             shared.string() + " is writable"));

    // Owned by someone other than root: whoever runs the test, or (run as root) another uid.
    if (me == 0) REQUIRE(::chown((bin / "tool").c_str(), 65534, static_cast<gid_t>(-1)) == 0);
    const FactsLookup real_below_root = [&](const fs::path& path) -> std::optional<FileFacts> {
        if (path.string().size() < runtime.root.string().size()) return dir_facts();
        return file_facts(path);
    };
    const auto not_root = check_trusted_binary(bin / "tool", root_only_rule(), real_below_root);
    REQUIRE_FALSE(not_root.has_value());
    CHECK(not_root.error().code == "tool_untrusted");
    CHECK_THAT(not_root.error().message, Catch::Contains("belongs to uid " + std::to_string(me == 0 ? 65534u : me) + ", not root"));
}

TEST_CASE("reference.md and how-it-works.md give dockerd's PATH and name every binary the check covers")
{
    const auto reference = test::read_text(test::source_dir() / "docs" / "reference.md");
    const auto how = test::read_text(test::source_dir() / "docs" / "how-it-works.md");
    CHECK_THAT(reference, Catch::Contains("`PATH=" + vm::engine_path_variable() + "`"));
    CHECK_THAT(how, Catch::Contains("`" + vm::engine_path_variable() + "`"));
    CHECK_THAT(reference, Catch::Contains(std::string("`") + images::k_mmdebstrap + "`"));
    CHECK_THAT(how, Catch::Contains(std::string("`") + images::k_mmdebstrap + "`"));
    CHECK_THAT(how, Catch::Contains("(at most " + std::to_string(k_max_link_hops) + " links)"));
    for (const auto helper : vm::k_engine_helpers) {
        INFO(helper);
        CHECK_THAT(reference, Catch::Contains("`" + std::string(helper) + "`"));
        CHECK_THAT(how, Catch::Contains("`" + std::string(helper) + "`"));
    }
}
