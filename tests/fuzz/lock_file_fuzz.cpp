// Fuzzes the recipe and lock parsers (committed text, but read by a root daemon): whatever
// they accept must render and parse back to the same value, and the spec hash must be stable.
#include "daemon/images/image_recipe.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto lock = pybox::images::parse_lock(text);
    if (lock) {
        const auto again = pybox::images::parse_lock(pybox::images::render_lock_file("fuzz", *lock));
        if (!again || *again != *lock) {
            std::abort();
        }
    }
    const auto recipe = pybox::images::parse_recipe(text);
    if (recipe && lock) {
        (void)pybox::images::image_spec_sha256("fuzz", *recipe, *lock);
    }
    if (recipe) {
        for (const auto& include : recipe->includes) {
            if (!pybox::images::is_valid_package_name(include)) {
                std::abort();
            }
        }
    }
    return 0;
}
