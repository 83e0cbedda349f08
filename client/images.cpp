// `pybox image ls`: the images the daemon has built, as recorded in images.json.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"
#include "proto/json_text.hpp"

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>

#include <chrono>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_list_timeout{10};

int run_list(bool json)
{
    auto connection = DaemonConnection::from_environment();
    if (!connection) return fail(connection.error());
    auto answer = connection->call("GET", "/v1/images", "", k_list_timeout);
    if (!answer) return fail(answer.error());
    if (json) {
        write_bytes(stdout, proto::to_json_text(*answer) + "\n");
        return 0;
    }
    return print(render_image_list(*answer));
}

std::string padded(std::string text, std::size_t width)
{
    if (text.size() < width) text.resize(width, ' ');
    return text;
}

}  // namespace

Rendered render_image_list(const boost::json::value& answer)
{
    const auto* images = answer.is_array() ? &answer.get_array() : json_list(answer, "images");
    if (images == nullptr || images->empty()) return {"No images built yet. Build one with: pybox setup\n", 0};
    std::string text = padded("NAME", 10) + padded("IMAGE ID", 73) + "RECIPE SHA-256\n";
    for (const auto& image : *images)
        text += padded(json_text(image, "name"), 10) + padded(json_text(image, "image_id"), 73) +
                json_text(image, "recipe_sha256") + "\n";
    return {text, 0};
}

Action configure_image(CLI::App& command)
{
    auto json = std::make_shared<bool>(false);
    command.require_subcommand(1);
    auto* list = command.add_subcommand("ls", "List the built images");
    list->add_flag("--json", *json, "Print the daemon's JSON answer");
    return [json] { return run_list(*json); };
}

}  // namespace pybox::client
