#include "daemon/engine/docker_image_copy.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/limits.hpp"

#include <cstdio>
#include <system_error>

namespace pybox::engine {

namespace {

bool holds(const Expected<ImageFacts>& inspected, const std::string& image_id)
{
    return inspected && inspected->id == image_id;
}

std::string format_seconds(double seconds)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", seconds);
    return text;
}

}  // namespace

boost::asio::awaitable<std::vector<std::string>> copy_images(EngineClient& from, EngineClient& to,
                                                             std::vector<vm::RecordedImage> images,
                                                             std::filesystem::path work_dir)
{
    std::vector<std::string> notes;
    for (const auto& image : images) {
        const std::string what = "image " + image.name + " (" + image.image_id.substr(0, 19) + ")";
        const auto present = co_await to.inspect_image(image.image_id, limits::k_inspect_timeout);
        if (holds(present, image.image_id)) continue;
        if (!present && present.error().code != api_error::k_engine_no_such_object) {
            notes.push_back("could not check " + what + " on this engine: " + present.error().message);
            continue;
        }
        std::error_code ec;
        std::filesystem::create_directories(work_dir, ec);
        const auto tar = work_dir / ("copy-" + image.image_id.substr(7, 12) + ".tar");
        const auto begun = MonoClock::now();
        auto exported = co_await from.export_image(image.image_id, tar, k_max_image_copy_bytes, k_image_copy_timeout);
        if (!exported) {
            std::filesystem::remove(tar, ec);
            notes.push_back("could not export " + what + " from " + from.dialer().describe() + ": " +
                            exported.error().message);
            continue;
        }
        auto loaded = co_await to.load_image(tar, k_image_copy_timeout);
        std::filesystem::remove(tar, ec);
        if (!loaded) {
            notes.push_back("could not load " + what + " into this engine: " + loaded.error().message);
        } else if (*loaded != image.image_id) {
            notes.push_back("loading " + what + " gave another image ID, " + *loaded);
        } else {
            notes.push_back("copied " + what + " from " + from.dialer().describe() + " in " +
                            format_seconds(seconds_between(begun, MonoClock::now())) + " s");
        }
    }
    co_return notes;
}

}  // namespace pybox::engine
