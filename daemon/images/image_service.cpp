#include "daemon/images/image_service.hpp"

#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/scoped_flag.hpp"
#include "common/sha256.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/images/image_recipe.hpp"
#include "daemon/images/mmdebstrap_build.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <system_error>
#include <type_traits>

namespace pybox::images {

namespace net = boost::asio;

namespace {

constexpr std::chrono::minutes k_import_timeout{5};
constexpr std::chrono::seconds k_image_remove_timeout{60};
constexpr std::size_t k_tag_hex_chars = 12;

// Runs blocking work on `pool` and resumes the awaiting coroutine on its own executor.
template <class Work>
net::awaitable<std::invoke_result_t<Work&>> off_loop(net::thread_pool& pool, Work work)
{
    std::optional<std::invoke_result_t<Work&>> result;
    co_await net::co_spawn(
        pool,
        [&]() -> net::awaitable<void> {
            result.emplace(work());
            co_return;
        },
        net::use_awaitable);
    co_return std::move(*result);
}

struct BuiltTar {
    Lock installed;
    std::string tar_sha256;
};

Expected<void> make_private_dir(const std::filesystem::path& dir)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec) {
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    }
    if (ec) {
        return make_error("file_unwritable", "Cannot create " + dir.string() + ": " + ec.message() + ".");
    }
    return {};
}

// Keeps recipes/NAME.lock equal to `spec` (the pre-run check hashes it).
Expected<void> write_spec_if_changed(const std::filesystem::path& file, const std::string& spec)
{
    auto current = read_file_capped(file, spec.size());
    if (current && *current == spec) {
        return {};
    }
    return write_file_atomic(file, spec, 0600);
}

}  // namespace

RecipeImageService::RecipeImageService(RuntimePaths paths, engine::EngineClient& engine,
                                       std::filesystem::path recipes_source_dir)
    : m_registry(std::move(paths)),
      m_engine(engine),
      m_source_dir(std::move(recipes_source_dir)),
      m_build_thread(std::make_unique<net::thread_pool>(1))
{
}

RecipeImageService::~RecipeImageService()
{
    m_build_thread->join();
}

net::awaitable<Expected<proto::SetupAnswer>> RecipeImageService::setup(std::vector<std::string> images, bool refresh_lock)
{
    if (m_busy) {
        co_return make_error("setup_busy", "Another pybox setup is running; wait for it to finish.");
    }
    ScopedFlag busy(m_busy);
    if (images.empty()) {
        images = list_recipes(m_source_dir);
    }
    proto::SetupAnswer answer;
    for (const std::string& name : images) {
        auto result = co_await setup_one(name, refresh_lock);
        if (!result) {
            co_return result.error();
        }
        answer.images.push_back(std::move(*result));
    }
    co_return answer;
}

net::awaitable<Expected<proto::SetupImage>> RecipeImageService::setup_one(const std::string& name, bool refresh_lock)
{
    const auto started = MonoClock::now();
    auto files = load_recipe_files(m_source_dir, name);
    if (!files) {
        co_return files.error();
    }
    const std::string lock_display = "images/" + name + "/lock";
    auto previous = m_registry.find(name);
    if (!previous) {
        co_return previous.error();
    }

    if (!refresh_lock) {
        if (!files->lock) {
            co_return make_error("lock_missing", "The " + name + " image has no lock file " + lock_display +
                                                     ". Create it with: pybox setup --refresh-lock (then commit it).");
        }
        const std::string spec = image_spec_text(name, files->recipe, *files->lock);
        const std::string recipe_sha = sha256_hex(spec);
        if (*previous && (*previous)->recipe_sha256 == recipe_sha) {
            auto state = co_await engine_image_state(m_engine, **previous);
            if (!state) {
                co_return state.error();
            }
            if (*state == EngineImageState::present) {
                if (auto dir = make_private_dir(m_registry.paths().recipes_dir()); !dir) {
                    co_return dir.error();
                }
                if (auto written = write_spec_if_changed(m_registry.spec_file(name), spec); !written) {
                    co_return written.error();
                }
                proto::SetupImage result;
                result.name = name;
                result.image_id = (*previous)->image_id;
                result.recipe_sha256 = recipe_sha;
                result.status = proto::k_setup_up_to_date;
                result.seconds = seconds_between(started, MonoClock::now());
                result.tar_sha256 = (*previous)->tar_sha256;
                co_return result;
            }
        }
    }

    const RuntimePaths& paths = m_registry.paths();
    for (const auto& dir : {paths.build_dir(), paths.recipes_dir()}) {
        if (auto made = make_private_dir(dir); !made) {
            co_return made.error();
        }
    }
    BuildRequest request{name,
                         files->recipe,
                         refresh_lock ? std::nullopt : files->lock,
                         paths.build_dir() / (name + ".tar"),
                         paths.build_dir(),
                         lock_display};
    auto built = co_await off_loop(*m_build_thread, [&request]() -> Expected<BuiltTar> {
        auto installed = build_image_tar(request);
        if (!installed) {
            return installed.error();
        }
        auto tar_sha = sha256_file_hex(request.tar_file);
        if (!tar_sha) {
            return tar_sha.error();
        }
        return BuiltTar{std::move(*installed), std::move(*tar_sha)};
    });
    std::error_code ignored;
    if (!built) {
        co_return built.error();
    }

    const Lock lock = refresh_lock ? built->installed : *files->lock;
    if (refresh_lock) {
        auto written = write_file_atomic(lock_file(m_source_dir, name), render_lock_file(name, lock), 0644);
        if (!written) {
            std::filesystem::remove(request.tar_file, ignored);
            co_return written.error();
        }
    }
    const std::string spec = image_spec_text(name, files->recipe, lock);
    const std::string recipe_sha = sha256_hex(spec);

    auto image_id = co_await m_engine.import_image(request.tar_file, "pybox-" + name,
                                                   recipe_sha.substr(0, k_tag_hex_chars), k_import_timeout);
    std::filesystem::remove(request.tar_file, ignored);
    if (!image_id) {
        co_return image_id.error();
    }
    if (auto written = write_file_atomic(m_registry.spec_file(name), spec, 0600); !written) {
        co_return written.error();
    }
    const ImageRecord record{name, *image_id, recipe_sha, rfc3339_utc(WallClock::now()), built->tar_sha256};
    if (auto put = m_registry.put(record); !put) {
        co_return put.error();
    }
    bool previous_removed = false;
    if (*previous && (*previous)->image_id != record.image_id) {
        auto removed = co_await m_engine.remove_image((*previous)->image_id, k_image_remove_timeout);
        previous_removed = removed.has_value();
    }
    proto::SetupImage result;
    result.name = name;
    result.image_id = record.image_id;
    result.recipe_sha256 = recipe_sha;
    result.status = proto::k_setup_built;
    result.seconds = seconds_between(started, MonoClock::now());
    result.tar_sha256 = record.tar_sha256;
    result.lock_refreshed = refresh_lock;
    if (*previous && (*previous)->image_id != record.image_id) {
        result.previous_image_id = (*previous)->image_id;
        result.previous_image_removed = previous_removed;
    }
    co_return result;
}

net::awaitable<Expected<proto::ImageList>> RecipeImageService::list()
{
    auto records = m_registry.load();
    if (!records) {
        co_return records.error();
    }
    proto::ImageList list;
    for (const ImageRecord& record : *records) {
        proto::ImageListEntry entry{record.name, record.image_id, record.recipe_sha256, record.built_at,
                                    record.tar_sha256, std::nullopt, std::nullopt};
        auto state = co_await engine_image_state(m_engine, record);
        if (state) {
            entry.present = *state == EngineImageState::present;
        } else {
            entry.present_unknown_because = state.error().message;
        }
        list.images.push_back(std::move(entry));
    }
    co_return list;
}

}  // namespace pybox::images
