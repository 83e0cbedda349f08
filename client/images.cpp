// `pybox image ls|build|rm`: the images the daemon has built (images.json), and own images
// built from a recipe file that the client reads and sends as text.
#include "client/commands.hpp"
#include "common/files.hpp"
#include "proto/image_request.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_list_timeout{10};
constexpr std::chrono::minutes k_build_timeout{25};
constexpr std::chrono::seconds k_remove_timeout{90};

std::string padded(std::string text, std::size_t width)
{
    if (text.size() < width) text.resize(width, ' ');
    return text;
}

struct ImageOptions {
    bool json = false;
    std::string name;
    std::string recipe_file;
};

int build_own_image(const ImageOptions& options)
{
    auto recipe = read_file_capped(options.recipe_file, proto::k_max_own_recipe_bytes);
    if (!recipe)
        return fail(make_error(recipe.error().code, options.recipe_file + ": " + recipe.error().message));
    return call_and_print("POST", "/v1/images/build",
                          proto::serialize_image_build_request({options.name, std::move(*recipe)}), k_build_timeout,
                          options.json, &proto::setup_answer_from_json, &render_setup);
}

}  // namespace

Rendered render_image_list(const proto::ImageList& answer)
{
    if (answer.images.empty()) return {"No images built yet. Build one with: pybox setup\n", 0};
    std::string text = padded("NAME", 34) + padded("IMAGE ID", 73) + "RECIPE SHA-256\n";
    for (const auto& image : answer.images)
        text += padded(image.name, 34) + padded(image.image_id, 73) + image.recipe_sha256 + "\n";
    return {text, 0};
}

Rendered render_image_removed(const proto::ImageList& answer)
{
    std::string text;
    for (const auto& image : answer.images) {
        text += "removed " + image.name + " (" + image.image_id + ")";
        if (image.present_unknown_because) text += "; the engine kept the image: " + *image.present_unknown_because;
        text += "\n";
    }
    return {text, 0};
}

Action configure_image(CLI::App& command)
{
    auto options = std::make_shared<ImageOptions>();
    command.require_subcommand(1);
    auto* list = command.add_subcommand("ls", "List the built images");
    list->add_flag("--json", options->json, "Print the daemon's JSON answer");
    auto* build = command.add_subcommand("build", "Build an own image: stdlib plus the recipe's Debian packages");
    build->add_option("name", options->name, "Image name: [a-z][a-z0-9-]{0,31}, not stdlib or data")->required();
    build->add_option("--recipe", options->recipe_file, "Recipe file (format=1, base=stdlib, include=PACKAGE...)")
        ->type_name("FILE")
        ->required();
    build->add_flag("--json", options->json, "Print the daemon's JSON answer");
    auto* remove = command.add_subcommand("rm", "Remove an own image");
    remove->add_option("name", options->name, "Own image name")->type_name("IMAGE")->required();
    remove->add_flag("--json", options->json, "Print the daemon's JSON answer");
    return [options, build, remove] {
        if (build->parsed()) return build_own_image(*options);
        if (remove->parsed())
            return call_and_print("POST", "/v1/images/remove", proto::serialize_image_remove_request({options->name}),
                                  k_remove_timeout, options->json, &proto::image_list_from_json,
                                  &render_image_removed);
        return call_and_print("GET", "/v1/images", "", k_list_timeout, options->json, &proto::image_list_from_json,
                              &render_image_list);
    };
}

}  // namespace pybox::client
