// common/data_dir.hpp: the daemon's data is found next to the running program, and the build
// stages the same files there, so the test binary in <build>/bin finds the build's copy of the
// recipes, never the source tree's.
#include "common/data_dir.hpp"
#include "daemon/images/image_recipe.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

namespace fs = std::filesystem;
using namespace pybox;

TEST_CASE("The data folder is found from the running program's own folder")
{
    const auto program_dir = own_program_dir();
    REQUIRE(program_dir.has_value());
    CHECK(fs::exists(*program_dir / "unit_tests"));
    const auto data = data_dir();
    REQUIRE(data.has_value());
    CHECK(*data == (program_dir->parent_path() / "share" / "pybox"));
}

TEST_CASE("The built-in recipes are the build's staged copy of images/, not the source tree")
{
    const auto recipes = images::installed_recipes_dir();
    REQUIRE(recipes.has_value());
    CHECK(*recipes == *data_dir() / "images");
    const fs::path source = pybox::test::source_dir() / "images";
    CHECK(fs::canonical(*recipes) != fs::canonical(source));
    for (const auto* image : {"stdlib", "data"}) {
        CHECK(test::read_text(images::recipe_file(*recipes, image)) == test::read_text(images::recipe_file(source, image)));
        CHECK(test::read_text(images::lock_file(*recipes, image)) == test::read_text(images::lock_file(source, image)));
    }
}

TEST_CASE("A missing data folder is an error naming the path that was looked at")
{
    const auto missing = data_subdir("no-such-folder");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == "data_missing");
    CHECK_THAT(missing.error().message, Catch::Contains((*data_dir() / "no-such-folder").string()));
    CHECK_THAT(missing.error().message, Catch::Contains((*own_program_dir() / "unit_tests").string()));
}
