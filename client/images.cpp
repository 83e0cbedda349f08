// `pybox image ls`: the images the daemon has built, as recorded in images.json.
#include "client/commands.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_list_timeout{10};

std::string padded(std::string text, std::size_t width)
{
    if (text.size() < width) text.resize(width, ' ');
    return text;
}

}  // namespace

Rendered render_image_list(const proto::ImageList& answer)
{
    if (answer.images.empty()) return {"No images built yet. Build one with: pybox setup\n", 0};
    std::string text = padded("NAME", 10) + padded("IMAGE ID", 73) + "RECIPE SHA-256\n";
    for (const auto& image : answer.images)
        text += padded(image.name, 10) + padded(image.image_id, 73) + image.recipe_sha256 + "\n";
    return {text, 0};
}

Action configure_image(CLI::App& command)
{
    auto json = std::make_shared<bool>(false);
    command.require_subcommand(1);
    auto* list = command.add_subcommand("ls", "List the built images");
    list->add_flag("--json", *json, "Print the daemon's JSON answer");
    return [json] {
        return call_and_print("GET", "/v1/images", "", k_list_timeout, *json, &proto::image_list_from_json,
                              &render_image_list);
    };
}

}  // namespace pybox::client
