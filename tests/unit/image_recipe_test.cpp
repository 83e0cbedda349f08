#include "daemon/images/image_recipe.hpp"
#include "tests/support/build_paths.hpp"

#include "common/ids.hpp"

#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace pybox::images;

namespace {

using pybox::test::replaced;

const std::string k_recipe =
    "# comment\n"
    "format=1\n"
    "variant=essential\n"
    "source=http://deb.debian.org/debian bookworm main\n"
    "source=http://deb.debian.org/debian-security bookworm-security main\n"
    "include=python3\n"
    "\n"
    "source_date_epoch=1700000000\n";

const std::string k_sha_a(64, 'a');
const std::string k_sha_b(64, 'b');
const std::string k_lock = "# pins\nbash=5.2.15-2+b13 " + k_sha_a + "\nbsdutils=1:2.38.1-5+deb12u3 " + k_sha_b +
                           "\npython3=3.11.2-1+b1 " + k_sha_a + "\n";

std::string recipe_error(const std::string& text)
{
    const auto parsed = parse_recipe(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "recipe_invalid");
    return parsed.error().message;
}

void require_lock_rejected(const std::string& text)
{
    const auto parsed = parse_lock(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "lock_invalid");
}

Recipe parsed_recipe(const std::string& text)
{
    auto recipe = parse_recipe(text);
    REQUIRE(recipe.has_value());
    return *recipe;
}

Lock parsed_lock(const std::string& text)
{
    auto lock = parse_lock(text);
    REQUIRE(lock.has_value());
    return *lock;
}

}  // namespace

TEST_CASE("A well-formed recipe parses into its fields")
{
    const Recipe recipe = parsed_recipe(k_recipe);
    CHECK(recipe.variant == "essential");
    REQUIRE(recipe.sources.size() == 2);
    CHECK(recipe.sources[1] == AptSource{"http://deb.debian.org/debian-security", "bookworm-security", {"main"}});
    CHECK(recipe.includes == std::vector<std::string>{"python3"});
    CHECK(recipe.source_date_epoch == 1700000000);
}

TEST_CASE("The committed stdlib recipe and lock parse")
{
    const auto files = load_recipe_files(pybox::test::source_dir() / "images", "stdlib");
    REQUIRE(files.has_value());
    REQUIRE(files->lock.has_value());
    CHECK(files->lock->contains("python3"));
    CHECK(files->lock->contains("coreutils"));
}

TEST_CASE("A recipe with an unknown key is refused and the line is named")
{
    const std::string message = recipe_error(k_recipe + "mirror=http://x/ y z\n");
    CHECK(message.find("line 9") != std::string::npos);
    CHECK(message.find("mirror") != std::string::npos);
}

TEST_CASE("A recipe that repeats a single-valued key is refused")
{
    recipe_error(k_recipe + "variant=apt\n");
}

TEST_CASE("A recipe missing a required key is refused")
{
    CHECK(recipe_error(replaced(k_recipe, "source_date_epoch=1700000000\n", "")).find("source_date_epoch") !=
          std::string::npos);
}

TEST_CASE("A recipe with an unsafe value is refused")
{
    recipe_error(replaced(k_recipe, "include=python3", "include=python3;rm"));
    recipe_error(replaced(k_recipe, "include=python3", "include=python3 bash"));
    recipe_error(replaced(k_recipe, "variant=essential", "variant=custom"));
    recipe_error(replaced(k_recipe, "http://deb.debian.org/debian bookworm", "ftp://deb.debian.org/debian bookworm"));
    recipe_error(replaced(k_recipe, "http://deb.debian.org/debian bookworm", "http://deb'.debian.org/debian bookworm"));
    recipe_error(replaced(k_recipe, "bookworm main", "bookworm"));
    recipe_error(replaced(k_recipe, "bookworm main", "Bookworm main"));
    recipe_error(replaced(k_recipe, "format=1", "format=2"));
    recipe_error(replaced(k_recipe, "format=1", " format=1"));
    recipe_error(replaced(k_recipe, "1700000000", "-5"));
    recipe_error(replaced(k_recipe, "1700000000", "017"));
    recipe_error(replaced(k_recipe, "1700000000", "1700000000x"));
    recipe_error(replaced(k_recipe, "1700000000", "99999999999999999999"));
}

TEST_CASE("A recipe with control or non-ASCII bytes is refused")
{
    recipe_error(replaced(k_recipe, "format=1\n", "format=1\r\n"));
    recipe_error(replaced(k_recipe, "# comment", "# comm\xc3\xa9nt"));
    recipe_error(replaced(k_recipe, "# comment", std::string("# a\0b", 5)));
}

TEST_CASE("A recipe larger than the cap is refused")
{
    recipe_error(k_recipe + std::string(k_max_recipe_bytes, '#'));
}

TEST_CASE("A lock parses into sorted package versions")
{
    const Lock lock = parsed_lock(k_lock);
    REQUIRE(lock.size() == 3);
    CHECK(lock.at("bsdutils") == LockedPackage{"1:2.38.1-5+deb12u3", k_sha_b});
    CHECK(lock.begin()->first == "bash");
}

TEST_CASE("A lock with a malformed line is refused")
{
    const std::string sha = " " + k_sha_a + "\n";
    require_lock_rejected("python3" + sha);
    require_lock_rejected("python3=" + sha);
    require_lock_rejected("=3.11" + sha);
    require_lock_rejected("Python3=3.11" + sha);
    require_lock_rejected("python3=3.11 \n");
    require_lock_rejected("python3=3.11\n");
    require_lock_rejected("python3=3.11  " + k_sha_a + "\n");
    require_lock_rejected("python3=3.11 " + k_sha_a + " \n");
    require_lock_rejected("python3=3.11 " + std::string(63, 'a') + "\n");
    require_lock_rejected("python3=3.11 " + std::string(64, 'A') + "\n");
    require_lock_rejected("python3=3.11 " + std::string(64, 'g') + "\n");
    require_lock_rejected("python3=a3.11" + sha);
    require_lock_rejected("python3=x:3.11" + sha);
    require_lock_rejected("python3=3.11'" + sha);
    require_lock_rejected("python3=3.11" + sha + "python3=3.12" + sha);
    require_lock_rejected("# only comments\n");
    require_lock_rejected("");
}

TEST_CASE("Rendering a lock and parsing it again gives the same lock")
{
    const Lock lock = parsed_lock(k_lock);
    CHECK(parsed_lock(render_lock_file("stdlib", lock)) == lock);
}

TEST_CASE("The recipe SHA-256 ignores comments, blank lines and line order")
{
    const Recipe recipe = parsed_recipe(k_recipe);
    const Lock lock = parsed_lock(k_lock);
    const Recipe reordered = parsed_recipe("include=zlib1g\n" + replaced(k_recipe, "# comment\n", "\n\n"));
    const Recipe same_includes = parsed_recipe(replaced(k_recipe, "include=python3\n", "include=zlib1g\ninclude=python3\n"));
    CHECK(image_spec_sha256("stdlib", reordered, lock) == image_spec_sha256("stdlib", same_includes, lock));
    const Lock shuffled = parsed_lock("python3=3.11.2-1+b1 " + k_sha_a + "\n\nbash=5.2.15-2+b13 " + k_sha_a +
                                      "\nbsdutils=1:2.38.1-5+deb12u3 " + k_sha_b + "\n");
    CHECK(image_spec_sha256("stdlib", recipe, lock) == image_spec_sha256("stdlib", recipe, shuffled));
    CHECK(image_spec_sha256("stdlib", recipe, lock).size() == 64);
}

TEST_CASE("The recipe SHA-256 changes with any pinned version, source or the name")
{
    const Recipe recipe = parsed_recipe(k_recipe);
    const Lock lock = parsed_lock(k_lock);
    const std::string base = image_spec_sha256("stdlib", recipe, lock);
    CHECK(image_spec_sha256("data", recipe, lock) != base);
    CHECK(image_spec_sha256("stdlib", recipe, parsed_lock(replaced(k_lock, "b13", "b14"))) != base);
    CHECK(image_spec_sha256("stdlib", recipe, parsed_lock(replaced(k_lock, "b13 " + k_sha_a, "b13 " + k_sha_b))) != base);
    const Recipe other_epoch = parsed_recipe(replaced(k_recipe, "1700000000", "1700000001"));
    CHECK(image_spec_sha256("stdlib", other_epoch, lock) != base);
    const Recipe other_source = parsed_recipe(replaced(k_recipe, "bookworm-security main", "bookworm-security main contrib"));
    CHECK(image_spec_sha256("stdlib", other_source, lock) != base);
}

TEST_CASE("The spec text names every field once")
{
    const std::string text = image_spec_text("stdlib", parsed_recipe(k_recipe), parsed_lock(k_lock));
    CHECK(text ==
          "pybox-image-spec 3\nname=stdlib\n[recipe]\nformat=1\nvariant=essential\n"
          "source=http://deb.debian.org/debian bookworm main\n"
          "source=http://deb.debian.org/debian-security bookworm-security main\n"
          "include=python3\nsource_date_epoch=1700000000\n[lock]\n"
          "bash=5.2.15-2+b13 " + k_sha_a + "\nbsdutils=1:2.38.1-5+deb12u3 " + k_sha_b + "\npython3=3.11.2-1+b1 " +
              k_sha_a + "\n");
}

TEST_CASE("Image names are short lower-case folder names")
{
    CHECK(is_valid_image_name("stdlib"));
    CHECK(is_valid_image_name("data"));
    CHECK_FALSE(is_valid_image_name(""));
    CHECK_FALSE(is_valid_image_name("../etc"));
    CHECK_FALSE(is_valid_image_name("Stdlib"));
    CHECK_FALSE(is_valid_image_name("1data"));
    CHECK_FALSE(is_valid_image_name(std::string(33, 'a')));
}

TEST_CASE("Loading recipe files reports an unknown image and a missing lock")
{
    const auto dir = std::filesystem::temp_directory_path() / ("pybox-recipe-test-" + pybox::random_id_128());
    std::filesystem::create_directories(dir / "stdlib");
    std::ofstream(dir / "stdlib" / "recipe") << k_recipe;
    const auto missing = load_recipe_files(dir, "data");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == "unknown_image");
    const auto without_lock = load_recipe_files(dir, "stdlib");
    REQUIRE(without_lock.has_value());
    CHECK_FALSE(without_lock->lock.has_value());
    std::ofstream(dir / "stdlib" / "lock") << k_lock;
    const auto with_lock = load_recipe_files(dir, "stdlib");
    REQUIRE(with_lock.has_value());
    CHECK(with_lock->lock == parsed_lock(k_lock));
    CHECK(list_recipes(dir) == std::vector<std::string>{"stdlib"});
    std::filesystem::remove_all(dir);
}

namespace {

std::string own_recipe_error(const std::string& text)
{
    const auto parsed = parse_own_recipe(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "own_recipe_invalid");
    return parsed.error().message;
}

}  // namespace

TEST_CASE("An own recipe names its base and packages; comments, blank lines and order do not matter")
{
    const auto parsed = parse_own_recipe("# mine\nformat=1\n\ninclude=python3-six\nbase=stdlib\ninclude=python3-attr\n");
    REQUIRE(parsed.has_value());
    CHECK(*parsed == OwnRecipe{"stdlib", {"python3-attr", "python3-six"}});
}

TEST_CASE("An own recipe outside its grammar is refused with the line")
{
    CHECK_THAT(own_recipe_error("format=1\nbase=stdlib\n"), Catch::Contains("at least one include"));
    CHECK_THAT(own_recipe_error("base=stdlib\ninclude=python3-six\n"), Catch::Contains("format=1"));
    CHECK_THAT(own_recipe_error("format=1\nbase=data\ninclude=python3-six\n"), Catch::Contains("line 2"));
    CHECK_THAT(own_recipe_error("format=2\nbase=stdlib\ninclude=x1\n"), Catch::Contains("line 1"));
    CHECK_THAT(own_recipe_error("format=1\nbase=stdlib\ninclude=Six\n"), Catch::Contains("not a Debian package"));
    CHECK_THAT(own_recipe_error("format=1\nbase=stdlib\ninclude=a;rm -rf /\n"),
               Catch::Contains("not a Debian package"));
    CHECK_THAT(own_recipe_error("format=1\nbase=stdlib\ninclude=six\ninclude=six\n"), Catch::Contains("once each"));
    CHECK_THAT(own_recipe_error("format=1\nbase=stdlib\nsource=http://evil.example/ x main\ninclude=six\n"),
               Catch::Contains("unknown key \"source\""));
    CHECK_THAT(own_recipe_error("format=1\nbase=stdlib\ninclude=six\r\n"), Catch::Contains("control"));
    CHECK_THAT(own_recipe_error("format=1\nbase=stdlib\nsix\n"), Catch::Contains("key=value"));
    std::string many = "format=1\nbase=stdlib\n";
    for (std::size_t i = 0; i <= k_max_own_includes; ++i) many += "include=p" + std::to_string(i) + "\n";
    CHECK_THAT(own_recipe_error(many), Catch::Contains("at most 32"));
    CHECK_THAT(own_recipe_error(std::string(k_max_recipe_bytes + 1, '#')), Catch::Contains("larger than"));
}

TEST_CASE("An own image's recipe is its base's with the own packages added")
{
    const Recipe base = parsed_recipe(k_recipe);
    const Recipe own = own_image_recipe(base, OwnRecipe{"stdlib", {"python3", "python3-six"}});
    CHECK(own.includes == std::vector<std::string>{"python3", "python3-six"});
    CHECK(own.sources == base.sources);
    CHECK(own.variant == base.variant);
    CHECK(own.source_date_epoch == base.source_date_epoch);
}
