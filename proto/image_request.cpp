#include "proto/image_request.hpp"

#include "common/api_error_codes.hpp"
#include "proto/box_policy.hpp"
#include "proto/request_json.hpp"
#include "util/text.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <initializer_list>
#include <map>

namespace pybox::proto {

namespace json = boost::json;

namespace {

// The string values of exactly `keys` (all required) in one JSON object.
Expected<std::map<std::string, std::string>> string_fields(std::string_view body,
                                                           std::initializer_list<std::string_view> keys,
                                                           const std::string& accepted)
{
    const auto document = parse_request_json(body);
    if (!document) return document.error();
    if (!document->is_object()) return invalid_request("The body must be one JSON object with the keys " + accepted + ".");
    std::map<std::string, std::string> fields;
    for (const auto& [key, value] : document->get_object()) {
        if (std::find(keys.begin(), keys.end(), std::string_view(key)) == keys.end())
            return invalid_request("Unknown key \"" + util::printable_excerpt(key) + "\"; the accepted keys are " + accepted + ".");
        if (!value.is_string()) return invalid_request("\"" + std::string(key) + "\" must be a string.");
        fields.emplace(std::string(key), std::string(value.get_string()));
    }
    for (const auto key : keys)
        if (!fields.contains(std::string(key))) return invalid_request("\"" + std::string(key) + "\" is required.");
    return fields;
}

Expected<std::string> own_image_name(std::string name)
{
    if (auto problem = own_image_name_problem(name); !problem.empty())
        return make_error(api_error::k_image_name_invalid, std::move(problem));
    return name;
}

}  // namespace

Expected<ImageBuildRequest> parse_image_build_request(std::string_view body)
{
    auto fields = string_fields(body, {"name", "recipe"}, "name and recipe");
    if (!fields) return fields.error();
    auto name = own_image_name(std::move((*fields)["name"]));
    if (!name) return name.error();
    std::string recipe = std::move((*fields)["recipe"]);
    if (recipe.size() > k_max_own_recipe_bytes)
        return invalid_request("\"recipe\" must be at most " + std::to_string(k_max_own_recipe_bytes) + " bytes (got " +
                       std::to_string(recipe.size()) + ").");
    return ImageBuildRequest{std::move(*name), std::move(recipe)};
}

Expected<ImageRemoveRequest> parse_image_remove_request(std::string_view body)
{
    auto fields = string_fields(body, {"name"}, "name");
    if (!fields) return fields.error();
    auto name = own_image_name(std::move((*fields)["name"]));
    if (!name) return name.error();
    return ImageRemoveRequest{std::move(*name)};
}

std::string serialize_image_build_request(const ImageBuildRequest& request)
{
    return json::serialize(json::object{{"name", request.name}, {"recipe", request.recipe}});
}

std::string serialize_image_remove_request(const ImageRemoveRequest& request)
{
    return json::serialize(json::object{{"name", request.name}});
}

}  // namespace pybox::proto
