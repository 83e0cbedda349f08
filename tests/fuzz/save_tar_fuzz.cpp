// Fuzzes the reading of an engine's image export: the first byte picks the reader (the whole
// `docker save` tar, its manifest.json, or an image config), the rest is its input. Whatever is
// accepted must be consistent: the config's digest is that of its bytes, every layer lies
// inside the tar, and there is a diff_id per layer.
#include "common/sha256.hpp"
#include "daemon/registry/pinned_reference.hpp"
#include "daemon/registry/save_tar.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

using pybox::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace pybox::registry;
    if (size < 1) return 0;
    const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] % 3) {
    case 0: {
        std::istringstream in(input);
        const auto image = read_saved_image(in, input.size());
        if (image) {
            check(image->config_digest == "sha256:" + pybox::sha256_hex(image->config));
            check(!image->layers.empty() && image->layers.size() <= k_max_layers);
            for (const auto& layer : image->layers) {
                check(layer.offset <= input.size() && layer.size <= input.size() - layer.offset);
                check(is_sha256_digest(layer.diff_id));
            }
        }
        break;
    }
    case 1: {
        const auto manifest = parse_save_manifest(input);
        if (manifest) check(!manifest->layers.empty() && manifest->layers.size() <= k_max_layers);
        break;
    }
    default: {
        const auto diff_ids = parse_config_diff_ids(input);
        if (diff_ids) {
            for (const auto& id : *diff_ids) check(is_sha256_digest(id));
        }
        break;
    }
    }
    return 0;
}
