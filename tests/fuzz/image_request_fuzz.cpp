// Fuzzes what `POST /v1/images/build` and `/v1/images/remove` read from untrusted bytes: the
// request bodies, then the own recipe inside an accepted build body. Whatever is accepted must
// carry a valid own-image name, a recipe within the cap, and only valid package names.
#include "daemon/images/image_recipe.hpp"
#include "proto/box_policy.hpp"
#include "proto/image_request.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    if (const auto removal = pybox::proto::parse_image_remove_request(body);
        removal && !pybox::proto::is_own_image_name(removal->name))
        std::abort();
    const auto request = pybox::proto::parse_image_build_request(body);
    if (!request) return 0;
    if (!pybox::proto::is_own_image_name(request->name) || request->recipe.size() > pybox::proto::k_max_own_recipe_bytes)
        std::abort();
    const auto recipe = pybox::images::parse_own_recipe(request->recipe);
    if (!recipe) return 0;
    if (recipe->base != "stdlib" || recipe->includes.empty() ||
        recipe->includes.size() > pybox::images::k_max_own_includes)
        std::abort();
    for (const auto& include : recipe->includes)
        if (!pybox::images::is_valid_package_name(include)) std::abort();
    return 0;
}
