#include "proto/setup_request.hpp"

#include "common/api_error_codes.hpp"
#include "proto/box_policy.hpp"
#include "proto/request_json.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>

namespace pybox::proto {

namespace json = boost::json;

namespace {

Expected<std::vector<std::string>> parse_images(const json::value& value)
{
    if (!value.is_array()) return invalid_request("\"images\" must be an array of image names.");
    const auto& names = value.get_array();
    if (names.empty()) return invalid_request("\"images\" must name at least one image.");
    const auto known = known_images();
    std::vector<std::string> images;
    for (const auto& name : names) {
        if (!name.is_string()) return invalid_request("\"images\" must hold only strings.");
        std::string text(name.get_string());
        if (std::find(known.begin(), known.end(), text) == known.end())
            return make_error(api_error::k_unknown_image, "There is no image named \"" + text + "\".");
        if (std::find(images.begin(), images.end(), text) == images.end()) images.push_back(text);
    }
    return images;
}

}  // namespace

Expected<SetupRequest> parse_setup_request(std::string_view body)
{
    SetupRequest request{{"stdlib"}, false};
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return request;

    const auto document = parse_request_json(body);
    if (!document) return document.error();
    if (!document->is_object()) return invalid_request("The body must be one JSON object.");

    for (const auto& [key, value] : document->get_object()) {
        if (key == "images") {
            auto images = parse_images(value);
            if (!images) return images.error();
            request.images = std::move(*images);
        } else if (key == "refresh_lock") {
            if (!value.is_bool()) return invalid_request("\"refresh_lock\" must be true or false.");
            request.refresh_lock = value.get_bool();
        } else {
            return invalid_request("Unknown key \"" + std::string(key) + "\"; accepted: images, refresh_lock.");
        }
    }
    return request;
}

std::string serialize_setup_request(const SetupRequest& request)
{
    json::object body{{"refresh_lock", request.refresh_lock}};
    if (!request.images.empty()) body["images"] = json::array(request.images.begin(), request.images.end());
    return json::serialize(body);
}

}  // namespace pybox::proto
