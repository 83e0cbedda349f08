// RecipeImageService: `pybox setup` and `pybox image ls` (daemon::ImageService) for images
// built from the recipes under images/ with mmdebstrap and imported through the Engine API, or,
// for the stdlib image where config.json's stdlib_image names one (macOS's seed image by
// default), pulled by that pinned reference and checked (daemon/registry/image_pull.hpp).
//
// setup(): per image, computes the recipe SHA-256 (recipe + lock); if images.json records that
// SHA and the engine still holds the recorded image ID, the image is "up_to_date" (one inspect
// call). Otherwise it builds <runtime>/build/NAME.tar on the service's own build thread, imports
// it as pybox-NAME:<first 12 hex of the recipe SHA>, writes recipes/NAME.lock and the record,
// deletes the tar and removes the image the record named before. With a tar cache folder, a
// tar already cached for the same recipe SHA-256 is imported instead of building (status
// "from_cache"), and each new build's tar is kept there. refresh_lock=true builds with
// the newest package versions and rewrites the lock in the recipes source folder first.
// A pinned stdlib image is "up_to_date" by the same rule (its spec is pinned_image_spec_text:
// the name and the reference), else pulled ("pulled"; refresh_lock does not apply to it), and
// recorded with the manifest digest it was pulled by as its tar_sha256. A pull the registry
// or the engine refuses records nothing and leaves nothing under the reference (its errors:
// image_pull.hpp's).
// Result: a proto::SetupAnswer, one SetupImage per image. Errors: see mmdebstrap_build.hpp, plus
// "unknown_image", "lock_missing", "setup_busy" (one setup at a time), the registry's and the
// engine's.
//
// build_own(): an own image (image_recipe.hpp, OwnRecipe): stdlib's recipe plus the own
// packages, resolved to the newest versions at build time; the resolved lock goes into
// recipes/NAME.lock and its SHA-256 into the record, as for the built-in images, so the pre-run
// check is the same. Always builds (a rebuild replaces the record and removes the old image).
// Errors: "image_name_invalid" (also for a name that has a recipe under images/),
// "own_recipe_invalid", "setup_busy", the build's, the registry's and the engine's.
// remove_own(): removes the record (under images.lock), recipes/NAME.lock and the engine's
// image (forced: a box still running from it keeps its container; later runs are refused
// with "image_not_built"). "image_not_built" when there is no such own image.
// setup, build_own and remove_own exclude each other ("setup_busy").
//
// Lifetime: the engine client must outlive the service. Calls run on the caller's executor
// (the daemon's io_context) and resume there; only mmdebstrap and hashing the tar run on the
// service's own build thread, which the destructor joins (waiting for a running build to end).
#pragma once

#include "common/clock.hpp"
#include "common/paths.hpp"
#include "daemon/images/image_recipe.hpp"
#include "daemon/images/build_progress.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/registry/pinned_reference.hpp"
#include "daemon/server/services.hpp"

#include <filesystem>
#include <memory>
#include <optional>
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
    // tar_cache_dir: config.json's image_tar_cache_dir; stdlib_image: its stdlib_image (see
    // daemon_config.hpp); either may be none.
    RecipeImageService(RuntimePaths paths, engine::EngineClient& engine, std::filesystem::path recipes_source_dir,
                       std::optional<std::filesystem::path> tar_cache_dir = std::nullopt,
                       std::optional<registry::PinnedReference> stdlib_image = std::nullopt);
    ~RecipeImageService() override;
    RecipeImageService(const RecipeImageService&) = delete;
    RecipeImageService& operator=(const RecipeImageService&) = delete;

    boost::asio::awaitable<Expected<proto::SetupAnswer>> setup(std::vector<std::string> images,
                                                               bool refresh_lock) override;
    // The records of images.json, each with whether the engine still holds its image.
    boost::asio::awaitable<Expected<proto::ImageList>> list() override;
    boost::asio::awaitable<Expected<proto::SetupAnswer>> build_own(std::string name, std::string recipe) override;
    boost::asio::awaitable<Expected<proto::ImageList>> remove_own(std::string name) override;
    // The image being built, mmdebstrap's phase and the bytes downloaded (BuildProgress).
    proto::SetupProgress progress() override;

private:
    boost::asio::awaitable<Expected<proto::SetupImage>> setup_one(const std::string& name, bool refresh_lock);
    // Builds `recipe` (pinned to `pins`, or resolved to the newest versions when nullopt, then
    // written to the source folder's lock when `rewrite_source_lock`), imports it, writes
    // recipes/NAME.lock and the record, and removes the image `previous` named.
    struct BuildPlan {
        std::string name;
        Recipe recipe;
        std::optional<Lock> pins;
        std::string lock_display;
        bool rewrite_source_lock = false;
        std::optional<ImageRecord> previous;
    };
    boost::asio::awaitable<Expected<proto::SetupImage>> build_and_record(const BuildPlan& plan);
    // The answer for an image whose record already has `spec`'s SHA-256 and whose image the
    // engine still holds (writing recipes/NAME.lock if it differs); nullopt when it must be made.
    boost::asio::awaitable<Expected<std::optional<proto::SetupImage>>> recorded_up_to_date(
        const std::string& name, const std::string& spec, const std::optional<ImageRecord>& previous,
        MonoClock::time_point started);
    // Pulls the pinned stdlib image, then records it as build_and_record does.
    boost::asio::awaitable<Expected<proto::SetupImage>> pull_and_record(const std::string& name,
                                                                        const std::string& spec,
                                                                        const std::optional<ImageRecord>& previous);
    // Writes recipes/NAME.lock and the record, removes the image `previous` named when it is
    // another, and says so in `result` (whose other fields the caller has set).
    boost::asio::awaitable<Expected<proto::SetupImage>> record(const ImageRecord& record, const std::string& spec,
                                                               const std::optional<ImageRecord>& previous,
                                                               proto::SetupImage result);

    ImageRegistry m_registry;
    engine::EngineClient& m_engine;
    std::filesystem::path m_source_dir;
    std::optional<std::filesystem::path> m_tar_cache_dir;
    std::optional<registry::PinnedReference> m_stdlib_image;
    std::unique_ptr<boost::asio::thread_pool> m_build_thread;
    bool m_busy = false;
    BuildProgress m_progress;
};

}  // namespace pybox::images
