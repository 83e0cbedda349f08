#include "daemon/images/build_progress.hpp"

#include <algorithm>
#include <system_error>

namespace pybox::images {

void MmdebstrapPhases::feed(std::string_view chunk)
{
    for (const char c : chunk) {
        if (c == '\n') {
            finish_line();
        } else if (m_line.size() < k_max_line_bytes) {
            m_line.push_back(c);
        } else {
            m_line_too_long = true;
        }
    }
}

void MmdebstrapPhases::finish_line()
{
    constexpr std::string_view k_info = "I: ";
    const std::string_view line = m_line;
    const bool printable = std::all_of(line.begin(), line.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte >= 0x20 && byte <= 0x7e;
    });
    constexpr std::string_view k_hook_command = " in shell: ";  // a hook's whole shell command follows
    if (!m_line_too_long && printable && line.starts_with(k_info) && line.size() > k_info.size()) {
        const std::string_view phase = line.substr(k_info.size());
        m_phase = std::string(phase.substr(0, std::min(phase.find(k_hook_command), k_max_phase_bytes)));
    }
    m_line.clear();
    m_line_too_long = false;
}

DownloadedPackages downloaded_packages(const std::filesystem::path& build_dir)
{
    namespace fs = std::filesystem;
    DownloadedPackages downloaded;
    std::size_t counted = 0;
    std::error_code ec;
    for (const auto& root : fs::directory_iterator(build_dir, ec)) {
        const fs::path complete = root.path() / "var/cache/apt/archives";
        for (const fs::path& cache : {complete, complete / "partial"}) {
            std::error_code inner;
            for (const auto& entry : fs::directory_iterator(cache, inner)) {
                if (++counted > k_max_counted_files) {
                    return downloaded;
                }
                std::error_code size_ec;
                if (entry.path().extension() == ".deb" && entry.is_regular_file(size_ec)) {
                    const auto size = entry.file_size(size_ec);
                    downloaded.bytes += size_ec ? 0 : size;
                    downloaded.packages += cache == complete ? 1U : 0U;
                }
            }
        }
    }
    return downloaded;
}

void BuildProgress::start(const std::string& image, const std::filesystem::path& build_dir)
{
    std::lock_guard lock(m_mutex);
    m_running = true;
    m_image = image;
    m_build_dir = build_dir;
    m_started = std::chrono::steady_clock::now();
    m_phases = MmdebstrapPhases{};
}

void BuildProgress::feed(std::string_view chunk)
{
    std::lock_guard lock(m_mutex);
    m_phases.feed(chunk);
}

void BuildProgress::finish()
{
    std::lock_guard lock(m_mutex);
    m_running = false;
}

proto::SetupProgress BuildProgress::snapshot() const
{
    std::filesystem::path build_dir;
    proto::SetupProgress progress;
    {
        std::lock_guard lock(m_mutex);
        if (!m_running) {
            return progress;
        }
        progress.building = m_image;
        progress.phase = m_phases.phase();
        progress.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
        build_dir = m_build_dir;
    }
    const auto downloaded = downloaded_packages(build_dir);
    progress.downloaded_packages = downloaded.packages;
    progress.downloaded_bytes = downloaded.bytes;
    return progress;
}

}  // namespace pybox::images
