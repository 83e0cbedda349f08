#include "daemon/server/setup_request.hpp"

#include "proto/box_policy.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>

namespace pybox::daemon {

namespace json = boost::json;

namespace {

Error invalid(std::string message) { return make_error("invalid_request", std::move(message)); }

Expected<std::vector<std::string>> parse_images(const json::value& value)
{
    if (!value.is_array()) return invalid("\"images\" must be an array of image names.");
    const auto& names = value.get_array();
    if (names.empty()) return invalid("\"images\" must name at least one image.");
    const auto known = proto::known_images();
    std::vector<std::string> images;
    for (const auto& name : names) {
        if (!name.is_string()) return invalid("\"images\" must hold only strings.");
        std::string text(name.get_string());
        if (std::find(known.begin(), known.end(), text) == known.end())
            return make_error("unknown_image", "There is no image named \"" + text + "\".");
        if (std::find(images.begin(), images.end(), text) == images.end()) images.push_back(text);
    }
    return images;
}

}  // namespace

Expected<SetupRequest> parse_setup_request(std::string_view body)
{
    SetupRequest request{{"stdlib"}, false};
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return request;

    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 8;
    const json::value document = json::parse(body, ec, {}, options);
    if (ec) return make_error("invalid_json", "The body is not valid JSON: " + ec.message() + ".");
    if (!document.is_object()) return invalid("The body must be one JSON object.");

    for (const auto& [key, value] : document.get_object()) {
        if (key == "images") {
            auto images = parse_images(value);
            if (!images) return images.error();
            request.images = std::move(*images);
        } else if (key == "refresh_lock") {
            if (!value.is_bool()) return invalid("\"refresh_lock\" must be true or false.");
            request.refresh_lock = value.get_bool();
        } else {
            return invalid("Unknown key \"" + std::string(key) + "\"; accepted: images, refresh_lock.");
        }
    }
    return request;
}

}  // namespace pybox::daemon
