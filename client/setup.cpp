// `pybox setup [--refresh-lock] [--image NAME ...]`: build the images or confirm them.
#include "client/commands.hpp"
#include "proto/setup_request.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::minutes k_setup_timeout{15};

std::string seconds_text(double seconds)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", seconds);
    return text;
}

}  // namespace

Rendered render_setup(const proto::SetupAnswer& answer)
{
    std::string text;
    for (const auto& image : answer.images) {
        const auto& id = image.image_id;
        if (image.status == proto::k_setup_up_to_date)
            text += image.name + ": up to date (" + id + ")\n";
        else if (image.status == proto::k_setup_built)
            text += image.name + ": built in " + seconds_text(image.seconds) + " s (" + id + ")\n";
        else
            text += image.name + ": " + image.status + " in " + seconds_text(image.seconds) + " s (" + id + ")\n";
    }
    return {text, 0};
}

Action configure_setup(CLI::App& command)
{
    auto options = std::make_shared<proto::SetupRequest>();
    command.add_flag("--refresh-lock", options->refresh_lock, "Resolve the image recipes' package versions anew");
    command.add_option("--image", options->images, "Image to build (repeatable; default stdlib)");
    return [options] {
        return call_and_print("POST", "/v1/setup", proto::serialize_setup_request(*options), k_setup_timeout, false,
                              &proto::setup_answer_from_json, &render_setup);
    };
}

}  // namespace pybox::client
