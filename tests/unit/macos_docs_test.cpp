// docs/macos.md against daemon/macos: the colima command line, override.yaml, the VM's sizes,
// the checks, the parsers' bounds, the trusted folders and the launchd agent's values it states
// are the ones the code defines.
#include "daemon/macos/colima_cgroup_host.hpp"
#include "daemon/macos/colima_checks.hpp"
#include "daemon/macos/colima_profile.hpp"
#include "daemon/macos/colima_ssh_config.hpp"
#include "daemon/macos/launchd_plist.hpp"
#include "daemon/macos/trusted_tools.hpp"
#include "daemon/registry/pinned_reference.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace pybox::macos;

namespace {

using pybox::test::table_row;

std::string macos_doc()
{
    return pybox::test::read_text(pybox::test::source_dir() / "docs" / "macos.md");
}

}  // namespace

TEST_CASE("docs/macos.md names the seed's stdlib image by the digest pybox setup pulls")
{
    CHECK_THAT(macos_doc(), Catch::Contains("`" + std::string(pybox::registry::k_seed_stdlib_image) + "`"));
}

TEST_CASE("docs/macos.md shows the exact colima start command line")
{
    auto argv = colima_start_argv("colima");
    std::string line;
    for (const auto& arg : argv) line += (line.empty() ? "" : " ") + arg;
    CHECK_THAT(macos_doc(), Catch::Contains("```\n" + line + "\n```"));
}

TEST_CASE("docs/macos.md shows override.yaml and the Docker config as PyBox writes them")
{
    CHECK_THAT(macos_doc(), Catch::Contains("```yaml\n" + override_yaml() + "```"));
    auto config = anonymous_docker_config();
    config.erase(std::remove(config.begin(), config.end(), '\n'), config.end());
    config.erase(std::remove(config.begin(), config.end(), ' '), config.end());
    CHECK(config == R"({"auths":{}})");
    CHECK_THAT(macos_doc(), Catch::Contains("`{\"auths\": {}}`"));
}

TEST_CASE("docs/macos.md states the VM's profile, sizes and minimum colima version from the code")
{
    CHECK_THAT(table_row(macos_doc(), "Profile"), Catch::Contains("`" + std::string(k_colima_profile) + "` (Lima instance `" +
                                               std::string(k_lima_instance) + "`)"));
    CHECK_THAT(table_row(macos_doc(), "CPUs / memory / disk"), Catch::Contains(std::to_string(k_vm_cpus) + " / " + std::to_string(k_vm_memory_gib) +
                                                            " GiB / " + std::to_string(k_vm_disk_gib) + " GiB"));
    CHECK_THAT(table_row(macos_doc(), "`status.size`"), Catch::Contains(std::to_string(k_vm_cpus) + " CPUs, " +
                                                     std::to_string(k_vm_memory_gib) + " GiB, " +
                                                     std::to_string(k_vm_disk_gib) + " GiB"));
    CHECK_THAT(macos_doc(), Catch::Contains("colima " + std::string(k_min_colima_version) + " or newer"));
}

TEST_CASE("docs/macos.md names the trusted folders in order and the link limit")
{
    CHECK_THAT(macos_doc(), Catch::Contains("from `" + std::string(k_trusted_tool_dirs[0]) + "` or `" +
                                            std::string(k_trusted_tool_dirs[1]) + "` only, in that order"));
    CHECK_THAT(macos_doc(), Catch::Contains("at most " + std::to_string(k_max_link_hops) + " links"));
    CHECK(k_admin_groups == std::array<unsigned, 2>{0, 80});
    CHECK_THAT(macos_doc(), Catch::Contains("group is `wheel` (0) or `admin` (80)"));
}

TEST_CASE("docs/macos.md lists every check a verdict can name")
{
    for (const auto* check : {"status.display_name", "status.runtime", "status.arch", "status.kubernetes", "status.network",
                              "status.docker_socket", "status.size", "mounts", "ports", "sockets", "override"})
        CHECK_THAT(table_row(macos_doc(), std::string("`") + check + "`"), Catch::StartsWith(std::string("| `") + check + "` |"));
}

TEST_CASE("docs/macos.md states the parsers' bounds from the code")
{
    const auto doc = macos_doc();
    CHECK(k_max_status_bytes == 16 * 1024);
    CHECK_THAT(doc, Catch::Contains("one JSON object of at most 16 KiB"));
    CHECK(k_max_mounts_bytes == 256 * 1024);
    CHECK(k_max_mount_lines == 4096);
    CHECK_THAT(doc, Catch::Contains("at most 256 KiB and 4,096 lines"));
    CHECK(k_max_hostagent_log_bytes == 4 * 1024 * 1024);
    CHECK_THAT(doc, Catch::Contains("The host agent log: at most 4 MiB"));
    CHECK(k_max_ssh_config_bytes == 16 * 1024);
    CHECK_THAT(doc, Catch::Contains("at most 16 KiB and " + std::to_string(k_max_ssh_config_lines) + " lines"));
}

TEST_CASE("docs/macos.md's launchd table matches the generated agent")
{
    const auto plist = launchd_plist();
    CHECK_THAT(plist, Catch::Contains("<key>ExitTimeOut</key>\n  <integer>30</integer>"));
    CHECK_THAT(table_row(macos_doc(), "`ExitTimeOut`"), Catch::Contains("| 30 |"));
    CHECK_THAT(plist, Catch::Contains("<key>Umask</key>\n  <integer>63</integer>"));
    CHECK_THAT(table_row(macos_doc(), "`Umask`"), Catch::Contains("| 63 (077) |"));
    CHECK_THAT(plist, Catch::Contains("<string>@HOME@/.local/bin/pyboxd</string>"));
    CHECK_THAT(table_row(macos_doc(), "`ProgramArguments`"), Catch::Contains("`@HOME@/.local/bin/pyboxd`"));
    CHECK_THAT(plist, Catch::Contains("<string>@HOME@/.pybox/runtime/pyboxd.log</string>"));
    CHECK_THAT(table_row(macos_doc(), "`StandardOutPath`, `StandardErrorPath`"), Catch::Contains("`@HOME@/.pybox/runtime/pyboxd.log`"));
}

TEST_CASE("docs/macos.md quotes the reason a run gives before the watcher has reached the VM, and its wait")
{
    auto doc = macos_doc();
    std::replace(doc.begin(), doc.end(), '\n', ' ');
    CHECK_THAT(doc, Catch::Contains("\"" + std::string(k_watcher_not_reached_yet) + "\""));
    CHECK_THAT(doc, Catch::Contains("waits at most " + std::to_string(k_direct_ssh_wait.count() / 1000) + " s"));
}
