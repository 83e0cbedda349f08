#include "daemon/config/daemon_config.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "common/posix.hpp"
#include "daemon/config/config_keys.hpp"
#include "daemon/config/config_values.hpp"
#include "daemon/config/engines_section.hpp"
#include "daemon/config/model_section.hpp"
#include "util/path_value.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <stdexcept>

namespace pybox::config {

namespace json = boost::json;

namespace {

constexpr std::size_t k_max_runtime_name = 64;

Error invalid_key(const std::filesystem::path& file, std::string_view key, std::string_view why)
{
    return config_invalid(file, "key \"" + std::string(key) + "\"", why);
}

Expected<std::filesystem::path> absolute_path(const json::value& value, const std::filesystem::path& file,
                                              std::string_view key, std::size_t max_length)
{
    if (auto problem = util::absolute_path_problem(value, max_length)) return invalid_key(file, key, *problem);
    return util::normal_path(value);
}

Expected<std::string> runtime_name(const json::value& value, const std::filesystem::path& file,
                                   std::string_view key)
{
    const auto* text = value.if_string();
    if (text == nullptr) return invalid_key(file, key, "must be a string");
    const std::string_view view = *text;
    const bool well_formed =
        !view.empty() && view.size() <= k_max_runtime_name && std::all_of(view.begin(), view.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                   c == '_' || c == '-';
        });
    if (!well_formed)
        return invalid_key(file, key, "must be a runtime name (1-64 letters, digits, '.', '_' or '-')");
    return std::string(view);
}

// The keys that take a whole number of seconds, and their ranges.
struct SecondsKey {
    std::string_view key;
    std::int64_t DaemonConfig::*field;
    std::int64_t min;
    std::int64_t max;
};

constexpr SecondsKey k_seconds_keys[] = {
    {"box_expiry_s", &DaemonConfig::box_expiry_s, limits::k_min_box_expiry_s, limits::k_max_box_expiry_s},
    {"settle_after_expiry_s", &DaemonConfig::settle_after_expiry_s, 0, limits::k_max_settle_after_expiry_s},
    {"sweep_interval_s", &DaemonConfig::sweep_interval_s, limits::k_min_sweep_interval_s,
     limits::k_max_sweep_interval_s},
};

const SecondsKey* find_seconds_key(std::string_view key)
{
    for (const auto& row : k_seconds_keys)
        if (row.key == key) return &row;
    return nullptr;
}

Expected<std::int64_t> seconds_in_range(const json::value& value, const std::filesystem::path& file,
                                        const SecondsKey& row)
{
    if (!value.is_int64() || value.get_int64() < row.min || value.get_int64() > row.max)
        return invalid_key(file, row.key,
                       "must be a whole number of seconds from " + std::to_string(row.min) + " to " +
                           std::to_string(row.max));
    return value.get_int64();
}

}  // namespace

Expected<DaemonConfig> parse_daemon_config(std::string_view text, const std::filesystem::path& file)
{
    if (text.size() > k_max_config_bytes)
        return make_error(api_error::k_config_invalid,
                          file.string() + " is larger than " + std::to_string(k_max_config_bytes) + " bytes.");
    boost::system::error_code ec;
    const json::value root = json::parse(text, ec);
    if (ec) return make_error(api_error::k_config_invalid, file.string() + " is not valid JSON: " + ec.message() + ".");
    const auto* object = root.if_object();
    if (object == nullptr) return make_error(api_error::k_config_invalid, file.string() + " must hold one JSON object.");

    DaemonConfig config;
    for (const auto& [key, value] : *object) {
        if (find_config_key(k_top_section, key) == nullptr) {
            return invalid_key(file, key, "is not known (known keys: " + known_keys(k_top_section) + ")");
        } else if (key == "engine_socket") {
            auto socket = absolute_path(value, file, key, k_max_unix_socket_path);
            if (!socket) return socket.error();
            config.engine_socket = std::move(*socket);
        } else if (key == "dockerd") {
            auto dockerd = absolute_path(value, file, key, k_max_path_bytes);
            if (!dockerd) return dockerd.error();
            config.dockerd = std::move(*dockerd);
        } else if (key == "runtime") {
            auto runtime = runtime_name(value, file, key);
            if (!runtime) return runtime.error();
            config.runtime = std::move(*runtime);
        } else if (key == "recipes_dir") {
            auto recipes = absolute_path(value, file, key, k_max_path_bytes);
            if (!recipes) return recipes.error();
            config.recipes_dir = std::move(*recipes);
        } else if (key == "image_tar_cache_dir") {
            auto cache = absolute_path(value, file, key, k_max_path_bytes);
            if (!cache) return cache.error();
            config.image_tar_cache_dir = std::move(*cache);
        } else if (key == "stdlib_image") {
            const auto* reference_text = value.if_string();
            if (reference_text == nullptr) return invalid_key(file, key, "must be a string");
            auto reference = registry::parse_pinned_reference(*reference_text);
            if (!reference) {
                std::string why = reference.error().message;
                if (why.ends_with('.')) why.pop_back();
                return invalid_key(file, key, "is not a pinned REGISTRY/REPO@sha256:DIGEST: " + why);
            }
            config.stdlib_image = std::move(*reference);
        } else if (key == "watcher_script") {
            auto script = absolute_path(value, file, key, k_max_path_bytes);
            if (!script) return script.error();
            config.watcher_script = std::move(*script);
        } else if (key == "unsealed_python") {
            // The client's key (client/unsealed, docs/unsealed.md): checked here so that the file
            // stays strict; the daemon runs nothing unsealed.
            if (auto python = absolute_path(value, file, key, k_max_path_bytes); !python) return python.error();
        } else if (key == "watcher") {
            if (!value.is_bool()) return invalid_key(file, key, "must be true or false");
            config.watcher = value.get_bool();
        } else if (key == "local_engine") {
            if (!value.is_bool()) return invalid_key(file, key, "must be true or false");
            config.local_engine = value.get_bool();
        } else if (key == "warm_boxes") {
            if (!value.is_int64() || value.get_int64() < 0 || value.get_int64() > limits::k_max_warm_boxes)
                return invalid_key(file, key, "must be a whole number from 0 to " + std::to_string(limits::k_max_warm_boxes));
            config.warm_boxes = static_cast<int>(value.get_int64());
        } else if (key == "engines") {
            auto engines = parse_engine_entries(value, file);
            if (!engines) return engines.error();
            config.engines = std::move(*engines);
        } else if (key == "model") {
            auto model = parse_model_config(value, file);
            if (!model) return model.error();
            config.model = std::move(*model);
        } else if (const auto* seconds_key = find_seconds_key(key)) {
            auto seconds = seconds_in_range(value, file, *seconds_key);
            if (!seconds) return seconds.error();
            config.*(seconds_key->field) = *seconds;
        } else {
            return invalid_key(file, key, "is not known (known keys: " + known_keys(k_top_section) + ")");
        }
    }
    if (!config.local_engine && config.engines.empty())
        return make_error(api_error::k_config_invalid, file.string() + ": \"local_engine\": false needs at least one entry in \"engines\".");
    return config;
}

std::optional<registry::PinnedReference> platform_stdlib_image()
{
#if defined(__APPLE__)
    auto seed = registry::parse_pinned_reference(registry::k_seed_stdlib_image);
    if (!seed) throw std::logic_error("the seed's stdlib image reference does not parse: " + seed.error().message);
    return *seed;
#else
    return std::nullopt;
#endif
}

Expected<DaemonConfig> load_daemon_config(const RuntimePaths& paths)
{
    const auto file = paths.config_file();
    auto text = read_file_capped(file, k_max_config_bytes);
    if (!text) {
        if (text.error().code == api_error::k_file_missing) return DaemonConfig{};
        return make_error(api_error::k_config_invalid, text.error().message);
    }
    return parse_daemon_config(*text, file);
}

std::filesystem::path private_engine_socket(const RuntimePaths& paths) { return paths.engine_dir() / "docker.sock"; }

std::filesystem::path engine_socket_path(const DaemonConfig& config, const RuntimePaths& paths)
{
    return config.engine_socket.value_or(private_engine_socket(paths));
}

}  // namespace pybox::config
