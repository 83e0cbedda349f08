// `pybox setup [--refresh-lock] [--with NAME ...] [--image NAME ...] [--quiet]`: build the
// images or confirm them. `--with data` means stdlib and data (the seed's spelling); `--image`
// names exactly the images to build; `--quiet` shows no progress while they build.
#include "client/commands.hpp"
#include "common/process.hpp"
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
constexpr std::chrono::seconds k_terminal_poll_interval{1};  // so the elapsed time ticks
constexpr std::chrono::seconds k_progress_call_timeout{5};

// Polls GET /v1/setup/progress on its own connection while the setup call waits, and writes
// what render_setup_progress says to stderr; before it goes, ends the progress (a terminal's
// line erased). Quiet starts no thread. A failed poll is skipped: the setup call reports real
// failures.
class ProgressPrinter {
public:
    explicit ProgressPrinter(ProgressStyle style) : m_style(style)
    {
        if (m_style != ProgressStyle::quiet) m_thread = std::thread([this] { poll(); });
    }
    ~ProgressPrinter()
    {
        m_stop = true;
        if (m_thread.joinable()) m_thread.join();
        write_bytes(stderr, end_setup_progress(m_style, m_shown));
    }
    ProgressPrinter(const ProgressPrinter&) = delete;
    ProgressPrinter& operator=(const ProgressPrinter&) = delete;

private:
    void poll()
    {
        auto connection = DaemonConnection::from_environment();
        const auto interval =
            m_style == ProgressStyle::terminal ? k_terminal_poll_interval : k_progress_poll_interval;
        while (!m_stop && connection) {
            for (auto waited = std::chrono::milliseconds{0}; waited < interval && !m_stop;
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
            const std::string text = render_setup_progress(m_style, m_shown, *progress);
            if (!text.empty()) {
                write_bytes(stderr, text);
                m_shown = *progress;
            }
        }
    }

    const ProgressStyle m_style;
    proto::SetupProgress m_shown;  // the poll thread's until it is joined
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

constexpr std::string_view k_erase_line = "\r\x1b[K";

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
        else if (image.status == proto::k_setup_pulled)
            text += image.name + ": pulled by its pinned digest in " + seconds_text(image.seconds) + " s (" + id + ")\n";
        else if (image.status == proto::k_setup_built)
            text += image.name + ": built in " + seconds_text(image.seconds) + " s (" + id + ")\n";
        else
            text += image.name + ": " + image.status + " in " + seconds_text(image.seconds) + " s (" + id + ")\n";
    }
    return {text, 0};
}

std::string render_setup_progress(ProgressStyle style, const proto::SetupProgress& previous,
                                  const proto::SetupProgress& current)
{
    if (style == ProgressStyle::quiet) return "";
    if (!current.building) return end_setup_progress(style, previous);
    std::string phase = current.phase.empty() ? "starting mmdebstrap" : current.phase;
    const std::string prefix = "pybox setup: " + *current.building + ": ";
    const std::string counts = " (" + std::to_string(current.downloaded_packages) + " packages, " +
                               megabytes_text(current.downloaded_bytes) + " downloaded, " +
                               seconds_text(current.seconds) + " s)";
    if (style == ProgressStyle::terminal) {
        // One row of the terminal, or "\r" would not return to its start: the phase gives way.
        const std::size_t fixed = prefix.size() + counts.size();
        const std::size_t room = fixed < k_setup_progress_columns ? k_setup_progress_columns - fixed : 0;
        if (phase.size() > room) phase = room > 3 ? phase.substr(0, room - 3) + "..." : "";
        return std::string(k_erase_line) + (prefix + phase + counts).substr(0, k_setup_progress_columns);
    }
    const std::string line = prefix + phase + counts;
    const bool same = previous.building == current.building && previous.phase == current.phase;
    if (same && current.seconds - previous.seconds < k_setup_progress_repeat_s) return "";
    return line + "\n";
}

std::string end_setup_progress(ProgressStyle style, const proto::SetupProgress& last)
{
    return style == ProgressStyle::terminal && last.building ? std::string(k_erase_line) : "";
}

Action configure_setup(CLI::App& command)
{
    auto options = std::make_shared<proto::SetupRequest>();
    command.add_flag("--refresh-lock", options->refresh_lock, "Resolve the image recipes' package versions anew");
    auto with = std::make_shared<std::vector<std::string>>();
    command.add_option("--with", *with, "Image to build besides stdlib, e.g. data (repeatable)");
    command.add_option("--image", options->images, "Exactly the image to build (repeatable; default stdlib)")
        ->excludes(command.get_option("--with"));
    auto quiet = std::make_shared<bool>(false);
    command.add_flag("--quiet,-q", *quiet, "Show no progress while images build");
    return [options, with, quiet] {
        proto::SetupRequest request = *options;
        if (!with->empty()) {
            request.images = {"stdlib"};
            request.images.insert(request.images.end(), with->begin(), with->end());
        }
        const auto style = *quiet                  ? ProgressStyle::quiet
                           : stderr_is_terminal() ? ProgressStyle::terminal
                                                  : ProgressStyle::plain;
        // The progress ends (a terminal's line erased) before the answer or the failure is printed.
        const auto document = [&] {
            const ProgressPrinter progress(style);
            return call_daemon("POST", "/v1/setup", proto::serialize_setup_request(request), k_setup_timeout);
        }();
        return print_answer(document, false, &proto::setup_answer_from_json, &render_setup);
    };
}

}  // namespace pybox::client
