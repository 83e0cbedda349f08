// daemon/images/tar_cache: a built tar is kept under its image's name and recipe SHA-256, and
// the cache holds the two newest tars of each image.
#include "daemon/images/tar_cache.hpp"
#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <set>

namespace pybox::tar_cache_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string sha_of(char digit) { return std::string(64, digit); }

std::set<std::string> cached_files(const fs::path& cache)
{
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(cache)) names.insert(entry.path().filename().string());
    return names;
}

TEST_CASE("The tar cache keeps an image's two newest tars and nothing of other images is touched")
{
    test::TempRuntime runtime;
    fs::create_directories(runtime.root);
    const fs::path built = runtime.root / "built.tar";
    const fs::path cache = runtime.root / "cache";
    std::ofstream(built) << "tar bytes";
    fs::create_directories(cache);
    std::ofstream(cache / ("itest-six-" + sha_of('9') + ".tar")) << "another image";
    std::ofstream(cache / "itest-notes.txt") << "not a tar of the cache";

    auto now = fs::file_time_type::clock::now();
    for (const char digit : {'a', 'b', 'c'}) {
        REQUIRE(images::keep_in_cache(built, cache, "itest", sha_of(digit)));
        const fs::path kept = images::cached_tar_file(cache, "itest", sha_of(digit));
        CHECK(kept == cache / ("itest-" + sha_of(digit) + ".tar"));
        fs::last_write_time(kept, now - 1h + std::chrono::minutes(digit - 'a'));  // in the order they were kept
    }
    CHECK(cached_files(cache) == std::set<std::string>{"itest-" + sha_of('b') + ".tar", "itest-" + sha_of('c') + ".tar",
                                                       "itest-six-" + sha_of('9') + ".tar", "itest-notes.txt"});
    std::ifstream kept(images::cached_tar_file(cache, "itest", sha_of('c')));
    std::string text;
    std::getline(kept, text);
    CHECK(text == "tar bytes");
}

TEST_CASE("A cache folder that cannot be written keeps nothing, and says so")
{
    test::TempRuntime runtime;
    fs::create_directories(runtime.root);
    const fs::path built = runtime.root / "built.tar";
    std::ofstream(built) << "tar bytes";
    std::ofstream(runtime.root / "a-file") << "not a folder";
    CHECK_FALSE(images::keep_in_cache(built, runtime.root / "a-file", "itest", sha_of('a')));
}

}  // namespace pybox::tar_cache_test
