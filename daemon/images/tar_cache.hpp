// The image tar cache (config.json's image_tar_cache_dir): each built image tar kept as
// NAME-<recipe SHA-256>.tar, so that a build of the same recipe SHA-256 imports it instead.
// Blocking file I/O: call it off the event loop.
#pragma once

#include <filesystem>
#include <string>

namespace pybox::images {

// Where the tar of image `name` with this recipe SHA-256 is (or would be) kept.
std::filesystem::path cached_tar_file(const std::filesystem::path& cache_dir, const std::string& name,
                                      const std::string& recipe_sha);

// Copies a built tar into the cache as NAME-<recipe SHA>.tar (through a temporary name, so a
// half-copied tar is never taken for a cached one) and drops the image's older cached tars but
// the newest of them: going back to the recipe before reuses its tar. Best effort: a cache that
// cannot be written only means the next setup builds again. Returns whether the tar was kept.
bool keep_in_cache(const std::filesystem::path& tar, const std::filesystem::path& cache_dir, const std::string& name,
                   const std::string& recipe_sha);

}  // namespace pybox::images
