// docs/reference.md against common/limits.hpp: the numbers the reference states for the kernel
// watcher are the ones the code uses.
#include "common/limits.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using namespace pybox;

// The row of docs/reference.md whose first cell is `name`.
std::string reference_row(const std::string& name)
{
    std::ifstream in(std::filesystem::path(PYBOX_SOURCE_DIR) / "docs" / "reference.md");
    REQUIRE(in.good());
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("| " + name + " |")) return line;
    FAIL("docs/reference.md has no row " << name);
    return {};
}

// Milliseconds as the docs write seconds: 50 -> "0.05 s", 1000 -> "1 s", 2500 -> "2.5 s".
std::string seconds(std::chrono::milliseconds value)
{
    std::ostringstream text;
    text << static_cast<double>(value.count()) / 1000.0 << " s";
    return text.str();
}

}  // namespace

TEST_CASE("The reference's kernel watcher row states the watcher's numbers from the code")
{
    const auto row = reference_row("Kernel watcher");
    CHECK_THAT(row, Catch::Contains(std::to_string(limits::k_watch_samples) + " samples in all"));
    CHECK_THAT(row, Catch::Contains(seconds(limits::k_watch_fast_gap) + " apart during the first " +
                                    seconds(limits::k_watch_fast_phase)));
    CHECK_THAT(row, Catch::Contains("never closer than " + seconds(limits::k_watch_min_gap)));
    CHECK_THAT(row, Catch::Contains("deadline + " + seconds(limits::k_watch_run_margin)));
    CHECK_THAT(row, Catch::Contains("not before " + seconds(limits::k_watch_min_run)));
    CHECK_THAT(row, Catch::Contains("up to " + seconds(limits::k_watch_final_wait) + " for the run's last task"));
    CHECK_THAT(row, Catch::Contains("polling every " + seconds(limits::k_watch_min_gap)));
    CHECK_THAT(row, Catch::Contains(seconds(limits::k_watch_finish_timeout) + " to end"));
}
