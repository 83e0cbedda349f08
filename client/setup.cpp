// `pybox setup [--refresh-lock] [--with NAME ...] [--image NAME ...]`: build the images or
// confirm them. `--with data` means stdlib and data (the seed's spelling); `--image` names
// exactly the images to build.
#include "client/commands.hpp"
#include "proto/setup_request.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

namespace pybox::client {

namespace {

constexpr std::chrono::minutes k_setup_timeout{15};
constexpr std::chrono::seconds k_progress_poll_interval{2};
constexpr std::chrono::seconds k_progress_call_timeout{5};

// Polls GET /v1/setup/progress on its own connections while the setup call waits, and prints
// what changes to stderr. A failed poll is skipped: the setup call reports real failures.
class ProgressPrinter {
public:
    ProgressPrinter() : m_thread([this] { poll(); }) {}
    ~ProgressPrinter()
    {
        m_stop = true;
        m_thread.join();
    }
    ProgressPrinter(const ProgressPrinter&) = delete;
    ProgressPrinter& operator=(const ProgressPrinter&) = delete;

private:
    void poll()
    {
        auto connection = DaemonConnection::from_environment();
        proto::SetupProgress shown;
        while (!m_stop && connection) {
            for (auto waited = std::chrono::milliseconds{0}; waited < k_progress_poll_interval && !m_stop;
                 waited += std::chrono::milliseconds{100}) {
                std::this_thread::sleep_for(std::chrono::milliseconds{100});
            }
            if (m_stop) {
                break;
            }
            const auto progress = read_answer(connection->call("GET", "/v1/setup/progress", "", k_progress_call_timeout),
                                              &proto::setup_progress_from_json);
            if (!progress) {
                continue;
            }
            const std::string line = render_setup_progress(shown, *progress);
            if (!line.empty()) {
                write_bytes(stderr, line);
                shown = *progress;
            }
        }
    }

    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

std::string megabytes_text(std::uint64_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return text;
}

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
        else if (image.status == proto::k_setup_from_cache)
            text += image.name + ": imported from the tar cache in " + seconds_text(image.seconds) + " s (" + id + ")\n";
        else if (image.status == proto::k_setup_built)
            text += image.name + ": built in " + seconds_text(image.seconds) + " s (" + id + ")\n";
        else
            text += image.name + ": " + image.status + " in " + seconds_text(image.seconds) + " s (" + id + ")\n";
    }
    return {text, 0};
}

std::string render_setup_progress(const proto::SetupProgress& previous, const proto::SetupProgress& current)
{
    if (!current.building) {
        return "";
    }
    const bool same = previous.building == current.building && previous.phase == current.phase;
    if (same && current.seconds - previous.seconds < k_setup_progress_repeat_s) {
        return "";
    }
    const std::string phase = current.phase.empty() ? "starting mmdebstrap" : current.phase;
    return "pybox setup: " + *current.building + ": " + phase + " (" + megabytes_text(current.downloaded_bytes) +
           " of packages downloaded, " + seconds_text(current.seconds) + " s)\n";
}

Action configure_setup(CLI::App& command)
{
    auto options = std::make_shared<proto::SetupRequest>();
    command.add_flag("--refresh-lock", options->refresh_lock, "Resolve the image recipes' package versions anew");
    auto with = std::make_shared<std::vector<std::string>>();
    command.add_option("--with", *with, "Image to build besides stdlib, e.g. data (repeatable)");
    command.add_option("--image", options->images, "Exactly the image to build (repeatable; default stdlib)")
        ->excludes(command.get_option("--with"));
    return [options, with] {
        proto::SetupRequest request = *options;
        if (!with->empty()) {
            request.images = {"stdlib"};
            request.images.insert(request.images.end(), with->begin(), with->end());
        }
        const ProgressPrinter progress;
        return call_and_print("POST", "/v1/setup", proto::serialize_setup_request(request), k_setup_timeout, false,
                              &proto::setup_answer_from_json, &render_setup);
    };
}

}  // namespace pybox::client
