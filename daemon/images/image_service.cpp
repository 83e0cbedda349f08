#include "daemon/images/image_service.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/scoped_flag.hpp"
#include "common/sha256.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/images/image_recipe.hpp"
#include "daemon/images/mmdebstrap_build.hpp"
#include "daemon/images/tar_cache.hpp"
#include "daemon/registry/image_pull.hpp"
#include "proto/box_policy.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <optional>
#include <system_error>
#include <type_traits>

namespace pybox::images {

namespace net = boost::asio;

namespace {

constexpr std::chrono::minutes k_import_timeout{5};
constexpr std::chrono::seconds k_image_remove_timeout{60};
constexpr std::size_t k_tag_hex_chars = 12;
// The one image config.json's stdlib_image may name.
constexpr std::string_view k_pinned_image_name = "stdlib";
constexpr const char* k_busy_message =
    "Another pybox setup, image build or image removal is running; retry when it is done.";

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
        return make_error(api_error::k_file_unwritable, "Cannot create " + dir.string() + ": " + ec.message() + ".");
    }
    return {};
}

// "image_name_invalid" unless `name` can name an own image: the charset, and no recipe folder
// under the source folder (the built-in images, whatever their number).
std::optional<Error> refuse_own_name(const std::string& name, const std::filesystem::path& source_dir)
{
    if (!proto::is_own_image_name(name)) {
        return make_error(api_error::k_image_name_invalid, proto::own_image_name_problem(name));
    }
    const auto builtin = list_recipes(source_dir);
    if (std::find(builtin.begin(), builtin.end(), name) != builtin.end()) {
        return make_error(api_error::k_image_name_invalid, "\"" + name + "\" has a recipe under images/: it is a built-in image.");
    }
    return std::nullopt;
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

// The tar to import: the cached one (hashed; its packages are the lock's, since its name is the
// recipe SHA-256 of recipe and lock) or a new build (hashed, progress fed to `progress`).
net::awaitable<Expected<BuiltTar>> produce_tar(net::thread_pool& pool, BuildProgress& progress,
                                               const BuildRequest& request,
                                               const std::optional<std::filesystem::path>& cached_tar)
{
    if (cached_tar) {
        co_return co_await off_loop(pool, [&]() -> Expected<BuiltTar> {
            auto tar_sha = sha256_file_hex(*cached_tar);
            if (!tar_sha) {
                return tar_sha.error();
            }
            return BuiltTar{*request.pins, std::move(*tar_sha)};
        });
    }
    progress.start(request.image_name, request.temp_dir);
    auto built = co_await off_loop(pool, [&]() -> Expected<BuiltTar> {
        auto installed = build_image_tar(request, [&progress](std::string_view chunk) { progress.feed(chunk); });
        if (!installed) {
            return installed.error();
        }
        auto tar_sha = sha256_file_hex(request.tar_file);
        if (!tar_sha) {
            return tar_sha.error();
        }
        return BuiltTar{std::move(*installed), std::move(*tar_sha)};
    });
    progress.finish();
    co_return built;
}

}  // namespace

RecipeImageService::RecipeImageService(RuntimePaths paths, engine::EngineClient& engine,
                                       std::filesystem::path recipes_source_dir,
                                       std::optional<std::filesystem::path> tar_cache_dir,
                                       std::optional<registry::PinnedReference> stdlib_image)
    : m_registry(std::move(paths)),
      m_engine(engine),
      m_source_dir(std::move(recipes_source_dir)),
      m_tar_cache_dir(std::move(tar_cache_dir)),
      m_stdlib_image(std::move(stdlib_image)),
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
        co_return make_error(api_error::k_setup_busy, k_busy_message);
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
    auto previous = m_registry.find(name);
    if (!previous) {
        co_return previous.error();
    }
    if (name == k_pinned_image_name && m_stdlib_image) {
        const std::string spec = pinned_image_spec_text(name, m_stdlib_image->text());
        auto current = co_await recorded_up_to_date(name, spec, *previous, started);
        if (!current) {
            co_return current.error();
        }
        if (*current) {
            co_return std::move(**current);
        }
        co_return co_await pull_and_record(name, spec, *previous);
    }

    auto files = load_recipe_files(m_source_dir, name);
    if (!files) {
        co_return files.error();
    }
    const std::string lock_display = "images/" + name + "/lock";
    if (!refresh_lock) {
        if (!files->lock) {
            co_return make_error(api_error::k_lock_missing, "The " + name + " image has no lock file " + lock_display +
                                                     ". Create it with: pybox setup --refresh-lock (then commit it).");
        }
        const std::string spec = image_spec_text(name, files->recipe, *files->lock);
        auto current = co_await recorded_up_to_date(name, spec, *previous, started);
        if (!current) {
            co_return current.error();
        }
        if (*current) {
            co_return std::move(**current);
        }
    }

    const BuildPlan plan{name, files->recipe, refresh_lock ? std::nullopt : files->lock, lock_display, refresh_lock,
                         *previous};
    co_return co_await build_and_record(plan);
}

net::awaitable<Expected<proto::SetupImage>> RecipeImageService::build_and_record(const BuildPlan& plan)
{
    const auto started = MonoClock::now();
    const std::string& name = plan.name;
    const RuntimePaths& paths = m_registry.paths();
    for (const auto& dir : {paths.build_dir(), paths.recipes_dir()}) {
        if (auto made = make_private_dir(dir); !made) {
            co_return made.error();
        }
    }
    BuildRequest request{name, plan.recipe, plan.pins, paths.build_dir() / (name + ".tar"), paths.build_dir(),
                         plan.lock_display};
    std::optional<std::filesystem::path> cached_tar;
    if (m_tar_cache_dir && plan.pins) {
        const auto candidate = cached_tar_file(*m_tar_cache_dir, name, image_spec_sha256(name, plan.recipe, *plan.pins));
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec)) {
            cached_tar = candidate;
        }
    }
    auto built = co_await produce_tar(*m_build_thread, m_progress, request, cached_tar);
    std::error_code ignored;
    if (!built) {
        co_return built.error();
    }

    const Lock lock = plan.pins ? *plan.pins : built->installed;
    if (plan.rewrite_source_lock) {
        auto written = write_file_atomic(lock_file(m_source_dir, name), render_lock_file(name, lock), 0644);
        if (!written) {
            std::filesystem::remove(request.tar_file, ignored);
            co_return written.error();
        }
    }
    const std::string spec = image_spec_text(name, plan.recipe, lock);
    const std::string recipe_sha = sha256_hex(spec);

    auto image_id = co_await m_engine.import_image(cached_tar.value_or(request.tar_file), "pybox-" + name,
                                                   recipe_sha.substr(0, k_tag_hex_chars), k_import_timeout);
    if (image_id && m_tar_cache_dir && !cached_tar) {
        co_await off_loop(*m_build_thread, [&] { return keep_in_cache(request.tar_file, *m_tar_cache_dir, name, recipe_sha); });
    }
    std::filesystem::remove(request.tar_file, ignored);
    if (!image_id) {
        co_return image_id.error();
    }
    proto::SetupImage result;
    result.status = cached_tar ? proto::k_setup_from_cache : proto::k_setup_built;
    result.seconds = seconds_between(started, MonoClock::now());
    result.lock_refreshed = plan.rewrite_source_lock;
    // Named, not a temporary of the co_await's expression: GCC 12 destroys such a temporary twice.
    const ImageRecord built_record{name, *image_id, recipe_sha, rfc3339_utc(WallClock::now()), built->tar_sha256};
    auto recorded = co_await record(built_record, spec, plan.previous, std::move(result));
    co_return recorded;
}

net::awaitable<Expected<std::optional<proto::SetupImage>>> RecipeImageService::recorded_up_to_date(
    const std::string& name, const std::string& spec, const std::optional<ImageRecord>& previous,
    MonoClock::time_point started)
{
    const std::string recipe_sha = sha256_hex(spec);
    if (!previous || previous->recipe_sha256 != recipe_sha) {
        co_return std::nullopt;
    }
    auto state = co_await engine_image_state(m_engine, *previous);
    if (!state) {
        co_return state.error();
    }
    if (*state != EngineImageState::present) {
        co_return std::nullopt;
    }
    if (auto dir = make_private_dir(m_registry.paths().recipes_dir()); !dir) {
        co_return dir.error();
    }
    if (auto written = write_spec_if_changed(m_registry.spec_file(name), spec); !written) {
        co_return written.error();
    }
    proto::SetupImage result;
    result.name = name;
    result.image_id = previous->image_id;
    result.recipe_sha256 = recipe_sha;
    result.status = proto::k_setup_up_to_date;
    result.seconds = seconds_between(started, MonoClock::now());
    result.tar_sha256 = previous->tar_sha256;
    co_return result;
}

net::awaitable<Expected<proto::SetupImage>> RecipeImageService::pull_and_record(const std::string& name,
                                                                               const std::string& spec,
                                                                               const std::optional<ImageRecord>& previous)
{
    const auto started = MonoClock::now();
    if (auto dir = make_private_dir(m_registry.paths().recipes_dir()); !dir) {
        co_return dir.error();
    }
    auto pulled = co_await registry::pull_pinned_image(m_engine, *m_stdlib_image, std::nullopt,
                                                       std::chrono::duration_cast<std::chrono::milliseconds>(registry::k_pull_timeout));
    if (!pulled) {
        co_return pulled.error();
    }
    proto::SetupImage result;
    result.status = proto::k_setup_pulled;
    result.seconds = seconds_between(started, MonoClock::now());
    // A pulled image has no tar: the manifest digest it was pulled by names its bytes instead.
    const std::string manifest_sha = m_stdlib_image->digest.substr(std::string_view("sha256:").size());
    const ImageRecord pulled_record{name, pulled->image_id, sha256_hex(spec), rfc3339_utc(WallClock::now()),
                                    manifest_sha};
    auto recorded = co_await record(pulled_record, spec, previous, std::move(result));
    co_return recorded;
}

net::awaitable<Expected<proto::SetupImage>> RecipeImageService::record(const ImageRecord& record, const std::string& spec,
                                                                      const std::optional<ImageRecord>& previous,
                                                                      proto::SetupImage result)
{
    if (auto written = write_file_atomic(m_registry.spec_file(record.name), spec, 0600); !written) {
        co_return written.error();
    }
    if (auto put = m_registry.put(record); !put) {
        co_return put.error();
    }
    result.name = record.name;
    result.image_id = record.image_id;
    result.recipe_sha256 = record.recipe_sha256;
    result.tar_sha256 = record.tar_sha256;
    if (previous && previous->image_id != record.image_id) {
        auto removed = co_await m_engine.remove_image(previous->image_id, k_image_remove_timeout);
        result.previous_image_id = previous->image_id;
        result.previous_image_removed = removed.has_value();
    }
    co_return result;
}

proto::SetupProgress RecipeImageService::progress()
{
    return m_progress.snapshot();
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

net::awaitable<Expected<proto::SetupAnswer>> RecipeImageService::build_own(std::string name, std::string recipe_text)
{
    if (m_busy) {
        co_return make_error(api_error::k_setup_busy, k_busy_message);
    }
    ScopedFlag busy(m_busy);
    if (auto refused = refuse_own_name(name, m_source_dir)) {
        co_return *refused;
    }
    auto own = parse_own_recipe(recipe_text);
    if (!own) {
        co_return own.error();
    }
    auto base = load_recipe_files(m_source_dir, own->base);
    if (!base) {
        co_return base.error();
    }
    auto previous = m_registry.find(name);
    if (!previous) {
        co_return previous.error();
    }
    const BuildPlan plan{name, own_image_recipe(base->recipe, *own), std::nullopt, "the recipe of " + name, false,
                         *previous};
    auto built = co_await build_and_record(plan);
    if (!built) {
        co_return built.error();
    }
    proto::SetupAnswer answer;
    answer.images.push_back(std::move(*built));
    co_return answer;
}

net::awaitable<Expected<proto::ImageList>> RecipeImageService::remove_own(std::string name)
{
    if (m_busy) {
        co_return make_error(api_error::k_setup_busy, k_busy_message);
    }
    ScopedFlag busy(m_busy);
    if (auto refused = refuse_own_name(name, m_source_dir)) {
        co_return *refused;
    }
    auto removed = m_registry.remove(name);
    if (!removed) {
        co_return removed.error();
    }
    if (!*removed) {
        co_return make_error(api_error::k_image_not_built, "There is no own image named " + name + ". See: pybox image ls");
    }
    const ImageRecord& record = **removed;
    std::error_code ignored;
    std::filesystem::remove(m_registry.spec_file(name), ignored);
    auto engine_removed = co_await m_engine.remove_image(record.image_id, k_image_remove_timeout);
    proto::ImageListEntry entry{record.name, record.image_id, record.recipe_sha256, record.built_at,
                                record.tar_sha256, std::nullopt, std::nullopt};
    if (engine_removed) {
        entry.present = false;
    } else {
        entry.present_unknown_because = engine_removed.error().message;
    }
    proto::ImageList list;
    list.images.push_back(std::move(entry));
    co_return list;
}

}  // namespace pybox::images
