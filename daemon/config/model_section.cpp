#include "daemon/config/model_section.hpp"

#include "common/api_error_codes.hpp"
#include "common/posix.hpp"
#include "daemon/config/config_keys.hpp"
#include "daemon/config/config_values.hpp"
#include "daemon/model/model_limits.hpp"
#include "util/path_value.hpp"

#include <algorithm>

namespace pybox::config {

namespace json = boost::json;

using model::k_default_base_url, model::k_max_answer_timeout_s, model::k_max_max_tokens, model::k_max_temperature;
using model::KeyFromEnvironment, model::KeyFromFile, model::ModelConfig;

namespace {

constexpr std::size_t k_max_model_name = 256;

Error invalid_model_key(const std::filesystem::path& file, std::string_view key, std::string_view why)
{
    return config_invalid(file, "key \"model." + std::string(key) + "\"", why);
}

Expected<std::filesystem::path> absolute_path(const json::value& value, const std::filesystem::path& file,
                                              std::string_view key)
{
    if (util::absolute_path_problem(value, k_max_path_bytes))
        return invalid_model_key(file, key, "must be an absolute path of at most " + std::to_string(k_max_path_bytes) + " bytes");
    return util::normal_path(value);
}

std::optional<double> number(const json::value& value)
{
    if (value.is_double()) return value.get_double();
    if (value.is_int64()) return static_cast<double>(value.get_int64());
    if (value.is_uint64()) return static_cast<double>(value.get_uint64());
    return std::nullopt;
}

}  // namespace

Expected<model::ModelConfig> parse_model_config(const json::value& value, const std::filesystem::path& file)
{
    const auto* object = value.if_object();
    if (object == nullptr)
        return make_error(api_error::k_config_invalid, file.string() + ": key \"model\" must be an object.");
    ModelConfig config;
    auto endpoint = model::parse_base_url(k_default_base_url);
    config.endpoint = *endpoint;
    bool has_model = false;
    int key_sources = 0;
    for (const auto& [key, item] : *object) {
        if (find_config_key(k_model_section, key) == nullptr) {
            return invalid_model_key(file, key, "is not known (known keys: " + known_keys(k_model_section) + ")");
        } else if (key == "base_url") {
            const auto* text = item.if_string();
            if (text == nullptr) return invalid_model_key(file, key, "must be a string");
            auto parsed = model::parse_base_url(*text);
            if (!parsed) return invalid_model_key(file, key, parsed.error().message);
            config.endpoint = std::move(*parsed);
        } else if (key == "model") {
            const auto* text = item.if_string();
            if (text == nullptr || text->empty() || text->size() > k_max_model_name ||
                !std::all_of(text->begin(), text->end(), [](char c) { return c > ' ' && c < 0x7f; }))
                return invalid_model_key(file, key, "must be a model name: 1-256 printable ASCII characters without spaces");
            config.model = std::string(*text);
            has_model = true;
        } else if (key == "api_key_env") {
            const auto* text = item.if_string();
            if (text == nullptr || !model::is_variable_name(*text))
                return invalid_model_key(file, key, "must be an environment variable's name (1-128 of A-Z, a-z, 0-9, _)");
            config.key = KeyFromEnvironment{std::string(*text)};
            ++key_sources;
        } else if (key == "api_key_file") {
            auto path = absolute_path(item, file, key);
            if (!path) return path.error();
            config.key = KeyFromFile{std::move(*path)};
            ++key_sources;
        } else if (key == "ca_file") {
            auto path = absolute_path(item, file, key);
            if (!path) return path.error();
            config.ca_file = std::move(*path);
        } else if (key == "temperature") {
            const auto temperature = number(item);
            if (!temperature || *temperature < 0.0 || *temperature > k_max_temperature)
                return invalid_model_key(file, key, "must be a number from 0 to 2");
            config.options.temperature = *temperature;
        } else if (key == "max_tokens") {
            if (!item.is_int64() || item.get_int64() < 1 || item.get_int64() > k_max_max_tokens)
                return invalid_model_key(file, key, "must be a whole number from 1 to " + std::to_string(k_max_max_tokens));
            config.options.max_tokens = item.get_int64();
        } else if (key == "answer_timeout_s") {
            if (!item.is_int64() || item.get_int64() < 1 || item.get_int64() > k_max_answer_timeout_s)
                return invalid_model_key(file, key,
                               "must be a whole number of seconds from 1 to " + std::to_string(k_max_answer_timeout_s));
            config.answer_timeout = std::chrono::seconds(item.get_int64());
        } else {
            return invalid_model_key(file, key, "is not known (known keys: " + known_keys(k_model_section) + ")");
        }
    }
    if (!has_model) return invalid_model_key(file, "model", "is required: the name of the model to ask");
    if (key_sources != 1)
        return make_error(api_error::k_config_invalid, file.string() +
                                                ": \"model\" needs exactly one of \"api_key_env\" and \"api_key_file\".");
    return config;
}

}  // namespace pybox::config
