// Image recipes and lock files (images/NAME/recipe, images/NAME/lock), parsed strictly, and
// the one definition of an image's recipe SHA-256.
//
// A recipe says how to build the image (mmdebstrap variant, apt sources, extra packages, a
// fixed SOURCE_DATE_EPOCH); its lock pins `package=version SHA256` for every package the
// image holds (the SHA-256 of the package's .deb file as the Debian archive publishes it). Both are plain text written by people and committed; the parsers refuse anything
// outside the grammar (unknown keys, repeated keys, unsafe characters, oversize files), so the
// values can be passed to mmdebstrap and apt without further quoting. Pure functions except
// load_recipe_files(), which reads two small files. Failures are Errors with code
// "recipe_invalid" or "lock_invalid" and a message naming the line.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::images {

inline constexpr std::size_t k_max_recipe_bytes = 16 * 1024;
inline constexpr std::size_t k_max_lock_bytes = 256 * 1024;

struct AptSource {
    std::string uri;                      // http:// or https://
    std::string suite;
    std::vector<std::string> components;  // at least one
    bool operator==(const AptSource&) const = default;
};

struct Recipe {
    std::string variant;                 // an mmdebstrap variant, e.g. "essential"
    std::vector<AptSource> sources;      // in file order, at least one
    std::vector<std::string> includes;   // sorted, unique, at least one
    std::int64_t source_date_epoch = 0;  // > 0
    bool operator==(const Recipe&) const = default;
};

// An own image's recipe (`pybox image build NAME --recipe FILE`), format 1, read strictly like
// a recipe ('#' comment lines and blank lines ignored, unknown or repeated keys refused):
//   format=1                 required
//   base=stdlib              required; the only base: the image is stdlib's recipe plus...
//   include=PACKAGE          ...these Debian packages, 1 to k_max_own_includes, each once
// Failures are "own_recipe_invalid" naming the line.
inline constexpr std::size_t k_max_own_includes = 32;
struct OwnRecipe {
    std::string base;                   // "stdlib"
    std::vector<std::string> includes;  // sorted, unique, at least one
    bool operator==(const OwnRecipe&) const = default;
};
Expected<OwnRecipe> parse_own_recipe(std::string_view text);

// One pinned package: its version and the SHA-256 of its .deb (64 lower-case hex digits).
struct LockedPackage {
    std::string version;
    std::string sha256;
    bool operator==(const LockedPackage&) const = default;
};

// package name -> pin, for every package the image holds.
using Lock = std::map<std::string, LockedPackage>;

// Image names are folder names under images/: [a-z][a-z0-9_-]{0,31}.
bool is_valid_image_name(std::string_view name);
// Debian policy 5.6.1 (names) and 5.6.12 (versions).
bool is_valid_package_name(std::string_view name);
bool is_valid_package_version(std::string_view version);
bool is_valid_sha256_hex(std::string_view text);

Expected<Recipe> parse_recipe(std::string_view text);
// Lines `package=version SHA256` (one space); '#' comment lines and blank lines ignored; a
// package at most once.
Expected<Lock> parse_lock(std::string_view text);

// The base's recipe with the own recipe's packages added to its includes.
Recipe own_image_recipe(const Recipe& base, const OwnRecipe& own);

// The lock as committed: a comment header naming the image, then one sorted line per package.
std::string render_lock_file(std::string_view image_name, const Lock& lock);

// The version of what the builder itself puts into an image beyond the recipe and lock
// (mmdebstrap_build.cpp's hooks). Bump it when they change: it is part of the image spec,
// so every recorded image is then rebuilt by the next `pybox setup`.
inline constexpr int k_image_builder_version = 3;

// The normalized recipe plus lock of one image: the text whose SHA-256 is the image's recipe
// SHA-256, and what the daemon keeps as <runtime>/recipes/NAME.lock. Comments, blank lines
// and the order of includes and lock lines do not change it.
std::string image_spec_text(std::string_view image_name, const Recipe& recipe, const Lock& lock);
std::string image_spec_sha256(std::string_view image_name, const Recipe& recipe, const Lock& lock);
// The spec of an image taken by its pinned reference instead of built (config.json's
// stdlib_image): its name and the reference, kept as <runtime>/recipes/NAME.lock like a built
// image's, so that the pre-run check and "up to date" work the same way.
std::string pinned_image_spec_text(std::string_view image_name, std::string_view reference);

// The built-in recipes: <prefix>/share/pybox/images of an installed PyBox, or the copy the build
// stages in <build>/share/pybox/images (common/data_dir.hpp). The error names the path it
// looked at. config.json's recipes_dir replaces it.
Expected<std::filesystem::path> installed_recipes_dir();

struct RecipeFiles {
    Recipe recipe;
    std::optional<Lock> lock;  // nullopt when the lock file does not exist
};

std::filesystem::path recipe_file(const std::filesystem::path& source_dir, std::string_view image_name);
std::filesystem::path lock_file(const std::filesystem::path& source_dir, std::string_view image_name);

// Reads source_dir/NAME/recipe and source_dir/NAME/lock. A missing recipe is
// "unknown_image"; a missing lock is not an error (see RecipeFiles::lock).
Expected<RecipeFiles> load_recipe_files(const std::filesystem::path& source_dir,
                                        std::string_view image_name);

// Names of the folders under source_dir that hold a recipe, sorted.
std::vector<std::string> list_recipes(const std::filesystem::path& source_dir);

}  // namespace pybox::images
