// RecipeImageService: `pybox setup` and `pybox image ls` (daemon::ImageService) for images
// built from the recipes under images/ with mmdebstrap and imported through the Engine API.
//
// setup(): per image, computes the recipe SHA-256 (recipe + lock); if images.json records that
// SHA and the engine still holds the recorded image ID, the image is "up_to_date" (one inspect
// call). Otherwise it builds <runtime>/build/NAME.tar on the service's own build thread, imports
// it as pybox-NAME:<first 12 hex of the recipe SHA>, writes recipes/NAME.lock and the record,
// deletes the tar and removes the image the record named before. refresh_lock=true builds with
// the newest package versions and rewrites the lock in the recipes source folder first.
// Result: a proto::SetupAnswer, one SetupImage per image. Errors: see mmdebstrap_build.hpp, plus
// "unknown_image", "lock_missing", "setup_busy" (one setup at a time), the registry's and the
// engine's.
//
// Lifetime: the engine client must outlive the service. Calls run on the caller's executor
// (the daemon's io_context) and resume there; only mmdebstrap and hashing the tar run on the
// service's own build thread, which the destructor joins (waiting for a running build to end).
#pragma once

#include "common/paths.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/server/services.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace boost::asio {
class thread_pool;
}

namespace pybox::engine {
class EngineClient;
}

namespace pybox::images {

class RecipeImageService final : public daemon::ImageService {
public:
    RecipeImageService(RuntimePaths paths, engine::EngineClient& engine, std::filesystem::path recipes_source_dir);
    ~RecipeImageService() override;
    RecipeImageService(const RecipeImageService&) = delete;
    RecipeImageService& operator=(const RecipeImageService&) = delete;

    boost::asio::awaitable<Expected<proto::SetupAnswer>> setup(std::vector<std::string> images,
                                                               bool refresh_lock) override;
    // The records of images.json, each with whether the engine still holds its image.
    boost::asio::awaitable<Expected<proto::ImageList>> list() override;

private:
    boost::asio::awaitable<Expected<proto::SetupImage>> setup_one(const std::string& name, bool refresh_lock);

    ImageRegistry m_registry;
    engine::EngineClient& m_engine;
    std::filesystem::path m_source_dir;
    std::unique_ptr<boost::asio::thread_pool> m_build_thread;
    bool m_busy = false;
};

}  // namespace pybox::images
