// Own images: the bodies of `POST /v1/images/build` and `POST /v1/images/remove`, parsed
// strictly from untrusted JSON. Pure.
//
// build: {"name": own-image name, "recipe": the recipe file's text (at most
// k_max_own_recipe_bytes)}; both required. The client reads the user's file and sends its text,
// so the daemon never opens a user's path; the recipe's grammar is the daemon's
// (daemon/images/image_recipe.hpp, parse_own_recipe). remove: {"name": own-image name}.
// Errors: "invalid_json", "invalid_request" (shape, unknown or missing key, wrong type, recipe
// too large), "image_name_invalid" (outside the charset or a built-in name).
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace pybox::proto {

inline constexpr std::size_t k_max_own_recipe_bytes = 16 * 1024;

struct ImageBuildRequest {
    std::string name;
    std::string recipe;
};

struct ImageRemoveRequest {
    std::string name;
};

Expected<ImageBuildRequest> parse_image_build_request(std::string_view body);
Expected<ImageRemoveRequest> parse_image_remove_request(std::string_view body);
std::string serialize_image_build_request(const ImageBuildRequest& request);
std::string serialize_image_remove_request(const ImageRemoveRequest& request);

}  // namespace pybox::proto
