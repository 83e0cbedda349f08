#include "daemon/images/build_progress.hpp"

#include "common/ids.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace pybox::images;

TEST_CASE("The phase is mmdebstrap's latest complete I: line, even when split across chunks")
{
    MmdebstrapPhases phases;
    CHECK(phases.phase().empty());
    phases.feed("I: chroot architecture amd64\nGet:1 http://x bash\nI: downloading pack");
    CHECK(phases.phase() == "chroot architecture amd64");
    phases.feed("ages with apt...\n");
    CHECK(phases.phase() == "downloading packages with apt...");
    phases.feed("E: something else\nW: warn\n");
    CHECK(phases.phase() == "downloading packages with apt...");
    phases.feed("I: running --customize-hook in shell: sh -c 'rm -f \"$1/etc\"'\n");
    CHECK(phases.phase() == "running --customize-hook");
}

TEST_CASE("Phase lines with control bytes or over the line cap are ignored, long ones cut")
{
    MmdebstrapPhases phases;
    phases.feed("I: first\n");
    phases.feed("I: bad\x1b[31m\n");
    phases.feed("I: " + std::string(k_max_line_bytes, 'x') + "\n");
    phases.feed("I: \n");
    CHECK(phases.phase() == "first");
    phases.feed("I: " + std::string(k_max_phase_bytes + 50, 'y') + "\n");
    CHECK(phases.phase() == std::string(k_max_phase_bytes, 'y'));
}

TEST_CASE("Downloaded packages and bytes count the .deb files in the build root's apt cache")
{
    const auto dir = std::filesystem::temp_directory_path() / ("pybox-progress-" + pybox::random_id_128());
    const auto archives = dir / "mmdebstrap.abc/var/cache/apt/archives";
    std::filesystem::create_directories(archives / "partial");
    std::ofstream(archives / "a_1_amd64.deb") << std::string(1000, 'a');
    std::ofstream(archives / "partial/b_1_amd64.deb") << std::string(234, 'b');
    std::ofstream(archives / "lock") << "not a package";
    CHECK(downloaded_packages(dir).packages == 1);  // the partial one is not a package yet
    CHECK(downloaded_packages(dir).bytes == 1234);
    CHECK(downloaded_packages(dir / "missing").packages == 0);
    CHECK(downloaded_packages(dir / "missing").bytes == 0);

    BuildProgress progress;
    CHECK_FALSE(progress.snapshot().building.has_value());
    progress.start("data", dir);
    progress.feed("I: installing remaining packages inside the chroot...\n");
    const auto running = progress.snapshot();
    CHECK(running.building == "data");
    CHECK(running.phase == "installing remaining packages inside the chroot...");
    CHECK(running.downloaded_packages == 1);
    CHECK(running.downloaded_bytes == 1234);
    progress.finish();
    CHECK(progress.snapshot() == pybox::proto::SetupProgress{});
    std::filesystem::remove_all(dir);
}
