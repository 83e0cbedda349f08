// `pybox setup [--refresh-lock] [--image NAME ...]`: build the images or confirm them.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

namespace pybox::client {

namespace {

constexpr std::chrono::minutes k_setup_timeout{15};

struct SetupOptions {
    std::vector<std::string> images;
    bool refresh_lock = false;
};

std::string seconds_text(const boost::json::value& image)
{
    const auto* seconds = image.is_object() ? image.get_object().if_contains("seconds") : nullptr;
    if (seconds == nullptr || !seconds->is_number()) return "?";
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", seconds->to_number<double>());
    return text;
}

int run_setup(const SetupOptions& options)
{
    boost::json::object body{{"refresh_lock", options.refresh_lock}};
    if (!options.images.empty()) body["images"] = boost::json::array(options.images.begin(), options.images.end());
    auto connection = DaemonConnection::from_environment();
    if (!connection) return fail(connection.error());
    auto answer = connection->call("POST", "/v1/setup", boost::json::serialize(body), k_setup_timeout);
    if (!answer) return fail(answer.error());
    return print(render_setup(*answer));
}

}  // namespace

Rendered render_setup(const boost::json::value& answer)
{
    const auto* images = answer.is_array() ? &answer.get_array() : json_list(answer, "images");
    if (images == nullptr) return {"pybox: pyboxd's answer names no images.\n", k_exit_pybox_failed};
    std::string text;
    for (const auto& image : *images) {
        const auto id = json_text(image, "image_id");
        if (json_text(image, "status") == "up_to_date")
            text += json_text(image, "name") + ": up to date (" + id + ")\n";
        else
            text += json_text(image, "name") + ": built in " + seconds_text(image) + " s (" + id + ")\n";
    }
    return {text, 0};
}

Action configure_setup(CLI::App& command)
{
    auto options = std::make_shared<SetupOptions>();
    command.add_flag("--refresh-lock", options->refresh_lock, "Resolve the image recipes' package versions anew");
    command.add_option("--image", options->images, "Image to build (repeatable; default stdlib)");
    return [options] { return run_setup(*options); };
}

}  // namespace pybox::client
