// The image registry: <runtime>/images.json, which image ID the daemon built for each recipe,
// and the pre-run check that the image a box is created from is still that image.
//
// images.json is written only by `pybox setup` (write_file_atomic, mode 0600, while holding
// images.lock) and read before every run. It is treated as untrusted-ish input: bounded size,
// exact keys and types, IDs and digests in canonical form; anything else is
// "images_file_invalid". ImageRegistry is a cheap value holding paths; its calls do small
// blocking file I/O (a few KiB) and never wait for a lock ("lock_busy" instead), so they may
// run on the event loop.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::engine {
class EngineClient;
}

namespace pybox::images {

inline constexpr std::size_t k_max_images_file_bytes = 64 * 1024;
inline constexpr std::size_t k_max_image_records = 32;

struct ImageRecord {
    std::string name;           // recipe folder name, e.g. "stdlib"
    std::string image_id;       // "sha256:" + 64 hex, as the engine reported it
    std::string recipe_sha256;  // image_spec_sha256() of the recipe and lock it was built from
    std::string built_at;       // RFC 3339 UTC
    std::string tar_sha256;     // the imported tar
    bool operator==(const ImageRecord&) const = default;
};

// Strict parse of images.json: {"schema_version": 1, "images": [ImageRecord...]}, names unique.
Expected<std::vector<ImageRecord>> parse_images_file(std::string_view text);
std::string serialize_images_file(const std::vector<ImageRecord>& records);

class ImageRegistry {
public:
    explicit ImageRegistry(RuntimePaths paths) : m_paths(std::move(paths)) {}

    // All records; a missing images.json is an empty registry.
    Expected<std::vector<ImageRecord>> load() const;
    Expected<std::optional<ImageRecord>> find(std::string_view name) const;
    // Adds or replaces the record with the same name (under images.lock).
    Expected<void> put(const ImageRecord& record) const;
    // Removes the record named `name` (under images.lock); the removed record, nullopt if none.
    Expected<std::optional<ImageRecord>> remove(std::string_view name) const;

    // <runtime>/recipes/NAME.lock: the image_spec_text() the recorded image was built from.
    std::filesystem::path spec_file(std::string_view name) const;
    const RuntimePaths& paths() const { return m_paths; }

private:
    // Under images.lock: loads the records, lets `change` edit them, and writes them back when it
    // answers true (false: nothing changed; an error: nothing is written).
    Expected<void> update(const std::function<Expected<bool>(std::vector<ImageRecord>&)>& change) const;

    RuntimePaths m_paths;
};

enum class EngineImageState { present, missing, different };
// Whether an engine holds the recorded image under its recorded id (the engine's backend,
// engine/engine_backend.hpp, answers it), or the engine's error.
using ImageStateCheck = std::function<boost::asio::awaitable<Expected<EngineImageState>>(const ImageRecord& record)>;

// The check made before every run (one small file hash, then `engine_state`). Errors:
//   "image_not_built"   no record for the image
//   "image_mismatch"    recipes/NAME.lock does not hash to the record, or the engine's image
//                       under that ID is a different one
//   "image_missing"     the engine no longer has the recorded image
//   "images_file_invalid", or the engine's own errors ("engine_unreachable", ...)
// Each message is one sentence that ends with what to run.
boost::asio::awaitable<Expected<ImageRecord>> verify_image_for_run(const ImageRegistry& registry,
                                                                   const ImageStateCheck& engine_state,
                                                                   std::string_view name);

// A Docker engine's answer: inspects record.image_id, present when the engine's Id equals it,
// missing on 404.
boost::asio::awaitable<Expected<EngineImageState>> engine_image_state(engine::EngineClient& engine,
                                                                      const ImageRecord& record);

}  // namespace pybox::images
