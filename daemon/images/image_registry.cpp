#include "daemon/images/image_registry.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/images/image_recipe.hpp"
#include "proto/box_policy.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <set>

namespace pybox::images {

namespace json = boost::json;
namespace net = boost::asio;

namespace {

constexpr std::int64_t k_schema_version = 1;
constexpr std::size_t k_max_timestamp_chars = 64;

bool is_hex64(std::string_view text)
{
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

bool is_image_id(std::string_view text)
{
    return text.starts_with("sha256:") && is_hex64(text.substr(7));
}

Error invalid(std::string_view why)
{
    return make_error(api_error::k_images_file_invalid,
                      "images.json is damaged (" + std::string(why) + "). Run: pybox setup");
}

// The string member `key` of an object that has exactly `keys`; nullopt if absent or not a string.
std::optional<std::string> string_member(const json::object& object, std::string_view key)
{
    const json::value* value = object.if_contains(key);
    if (value == nullptr || !value->is_string()) {
        return std::nullopt;
    }
    return std::string(value->get_string());
}

Expected<ImageRecord> parse_record(const json::value& value)
{
    if (!value.is_object()) {
        return invalid("an image entry is not an object");
    }
    const json::object& object = value.get_object();
    static constexpr std::string_view k_keys[] = {"name", "image_id", "recipe_sha256", "built_at", "tar_sha256"};
    if (object.size() != std::size(k_keys)) {
        return invalid("an image entry has other keys than name, image_id, recipe_sha256, built_at, tar_sha256");
    }
    std::optional<std::string> fields[std::size(k_keys)];
    for (std::size_t i = 0; i < std::size(k_keys); ++i) {
        fields[i] = string_member(object, k_keys[i]);
        if (!fields[i]) {
            return invalid("an image entry lacks the string \"" + std::string(k_keys[i]) + "\"");
        }
    }
    ImageRecord record{*fields[0], *fields[1], *fields[2], *fields[3], *fields[4]};
    if (!is_valid_image_name(record.name)) {
        return invalid("an image name is not valid");
    }
    if (!is_image_id(record.image_id)) {
        return invalid("the image_id of " + record.name + " is not sha256:<64 hex>");
    }
    if (!is_hex64(record.recipe_sha256) || !is_hex64(record.tar_sha256)) {
        return invalid("a digest of " + record.name + " is not 64 lower-case hex digits");
    }
    if (record.built_at.empty() || record.built_at.size() > k_max_timestamp_chars) {
        return invalid("the built_at of " + record.name + " is not a timestamp");
    }
    return record;
}

}  // namespace

Expected<std::vector<ImageRecord>> parse_images_file(std::string_view text)
{
    if (text.size() > k_max_images_file_bytes) {
        return invalid("larger than " + std::to_string(k_max_images_file_bytes) + " bytes");
    }
    json::error_code ec;
    const json::value document = json::parse(text, ec);
    if (ec) {
        return invalid("not JSON");
    }
    if (!document.is_object() || document.get_object().size() != 2) {
        return invalid("not an object with exactly schema_version and images");
    }
    const json::object& top = document.get_object();
    const json::value* version = top.if_contains("schema_version");
    const json::value* images = top.if_contains("images");
    if (version == nullptr || !version->is_int64() || version->get_int64() != k_schema_version) {
        return invalid("schema_version is not 1");
    }
    if (images == nullptr || !images->is_array() || images->get_array().size() > k_max_image_records) {
        return invalid("images is not an array of at most " + std::to_string(k_max_image_records) + " entries");
    }
    std::vector<ImageRecord> records;
    std::set<std::string> names;
    for (const json::value& entry : images->get_array()) {
        auto record = parse_record(entry);
        if (!record) {
            return record.error();
        }
        if (!names.insert(record->name).second) {
            return invalid("the image " + record->name + " is listed twice");
        }
        records.push_back(std::move(*record));
    }
    return records;
}

std::string serialize_images_file(const std::vector<ImageRecord>& records)
{
    json::array images;
    for (const ImageRecord& record : records) {
        images.push_back(json::object{{"name", record.name},
                                      {"image_id", record.image_id},
                                      {"recipe_sha256", record.recipe_sha256},
                                      {"built_at", record.built_at},
                                      {"tar_sha256", record.tar_sha256}});
    }
    return json::serialize(json::object{{"schema_version", k_schema_version}, {"images", std::move(images)}}) +
           "\n";
}

Expected<std::vector<ImageRecord>> ImageRegistry::load() const
{
    auto text = read_file_capped(m_paths.images_file(), k_max_images_file_bytes);
    if (!text) {
        if (text.error().code == api_error::k_file_missing) {
            return std::vector<ImageRecord>{};
        }
        if (text.error().code == api_error::k_too_large) {
            return invalid("larger than " + std::to_string(k_max_images_file_bytes) + " bytes");
        }
        return text.error();
    }
    return parse_images_file(*text);
}

Expected<std::optional<ImageRecord>> ImageRegistry::find(std::string_view name) const
{
    auto records = load();
    if (!records) {
        return records.error();
    }
    for (ImageRecord& record : *records) {
        if (record.name == name) {
            return std::optional<ImageRecord>(std::move(record));
        }
    }
    return std::optional<ImageRecord>();
}

Expected<void> ImageRegistry::update(const std::function<Expected<bool>(std::vector<ImageRecord>&)>& change) const
{
    auto lock = FileLock::try_acquire(m_paths.images_lock());
    if (!lock) {
        return lock.error();
    }
    auto records = load();
    if (!records) {
        return records.error();
    }
    auto changed = change(*records);
    if (!changed) {
        return changed.error();
    }
    if (!*changed) {
        return {};
    }
    return write_file_atomic(m_paths.images_file(), serialize_images_file(*records), 0600);
}

Expected<void> ImageRegistry::put(const ImageRecord& record) const
{
    return update([&](std::vector<ImageRecord>& records) -> Expected<bool> {
        const auto same = std::find_if(records.begin(), records.end(),
                                       [&](const ImageRecord& r) { return r.name == record.name; });
        if (same != records.end()) {
            *same = record;
        } else {
            records.push_back(record);
        }
        if (records.size() > k_max_image_records) {
            return make_error(api_error::k_images_file_full, "images.json already records " +
                                                      std::to_string(k_max_image_records) + " images.");
        }
        return true;
    });
}

Expected<std::optional<ImageRecord>> ImageRegistry::remove(std::string_view name) const
{
    std::optional<ImageRecord> removed;
    auto updated = update([&](std::vector<ImageRecord>& records) -> Expected<bool> {
        const auto same = std::find_if(records.begin(), records.end(),
                                       [&](const ImageRecord& r) { return r.name == name; });
        if (same == records.end()) {
            return false;
        }
        removed = std::move(*same);
        records.erase(same);
        return true;
    });
    if (!updated) {
        return updated.error();
    }
    return removed;
}

std::filesystem::path ImageRegistry::spec_file(std::string_view name) const
{
    return m_paths.recipes_dir() / (std::string(name) + ".lock");
}

net::awaitable<Expected<EngineImageState>> engine_image_state(engine::EngineClient& engine,
                                                              const ImageRecord& record)
{
    auto inspected = co_await engine.inspect_image(record.image_id, limits::k_inspect_timeout);
    if (!inspected) {
        if (inspected.error().code == api_error::k_engine_no_such_object) {
            co_return EngineImageState::missing;
        }
        co_return inspected.error();
    }
    const bool same = inspected->id == record.image_id;
    co_return same ? EngineImageState::present : EngineImageState::different;
}

net::awaitable<Expected<ImageRecord>> verify_image_for_run(const ImageRegistry& registry,
                                                           const ImageStateCheck& engine_state, std::string_view name)
{
    const std::string image(name);
    // Own images are rebuilt from their recipe; `pybox setup` rebuilds the built-in ones.
    const std::string rebuild =
        proto::is_own_image_name(image) ? "pybox image build " + image + " --recipe FILE" : "pybox setup";
    auto found = registry.find(image);
    if (!found) {
        co_return found.error();
    }
    if (!*found) {
        co_return make_error(api_error::k_image_not_built, "The " + image + " image is not built yet. Run: " + rebuild);
    }
    const ImageRecord record = std::move(**found);
    const std::filesystem::path spec = registry.spec_file(image);
    auto spec_sha = sha256_file_hex(spec);
    if (!spec_sha || *spec_sha != record.recipe_sha256) {
        co_return make_error(api_error::k_image_mismatch, "The recipe and lock of the " + image + " image (" + spec.string() +
                                                   ") do not match the recipe SHA-256 recorded in images.json. "
                                                   "Run: " + rebuild);
    }
    auto state = co_await engine_state(record);
    if (!state) {
        co_return state.error();
    }
    const std::string short_id = record.image_id.substr(0, 19);
    if (*state == EngineImageState::missing) {
        co_return make_error(api_error::k_image_missing, "The engine no longer has the " + image + " image " + short_id +
                                                  " recorded in images.json. Run: " + rebuild);
    }
    if (*state == EngineImageState::different) {
        co_return make_error(api_error::k_image_mismatch, "The engine's image under " + short_id + " is not the " + image +
                                                   " image recorded in images.json. Run: " + rebuild);
    }
    co_return record;
}

}  // namespace pybox::images
