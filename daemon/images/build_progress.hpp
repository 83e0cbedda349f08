// What `pybox setup` can show while an image builds (GET /v1/setup/progress): which image,
// mmdebstrap's current phase, and how many bytes of packages the build has downloaded.
//
// MmdebstrapPhases reads mmdebstrap's output (semi-trusted: it echoes apt and hook output)
// chunk by chunk and keeps only its latest phase line, "I: " followed by printable ASCII,
// without a hook's shell command (" in shell: ..."), cut at k_max_phase_bytes; a line longer than k_max_line_bytes is dropped whole, so memory
// stays bounded whatever arrives. Pure.
//
// BuildProgress is the shared state: the build thread feeds output, the event loop reads
// snapshots; a mutex guards it. downloaded_packages() counts the complete .deb files and sums
// the bytes of all (complete and partial) under build_dir/*/var/cache/apt/archives, the apt
// cache of mmdebstrap's temporary root, looking at no more than k_max_counted_files files.
#pragma once

#include "proto/answers.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::images {

inline constexpr std::size_t k_max_phase_bytes = 160;
inline constexpr std::size_t k_max_line_bytes = 4096;
inline constexpr std::size_t k_max_counted_files = 4096;

class MmdebstrapPhases {
public:
    void feed(std::string_view chunk);
    // The latest "I: ..." line without the "I: ", empty before the first.
    const std::string& phase() const { return m_phase; }

private:
    void finish_line();

    std::string m_line;
    bool m_line_too_long = false;
    std::string m_phase;
};

struct DownloadedPackages {
    std::uint64_t packages = 0;  // complete .deb files
    std::uint64_t bytes = 0;     // complete and partial
};
DownloadedPackages downloaded_packages(const std::filesystem::path& build_dir);

class BuildProgress {
public:
    void start(const std::string& image, const std::filesystem::path& build_dir);
    void feed(std::string_view chunk);
    void finish();
    proto::SetupProgress snapshot() const;

private:
    mutable std::mutex m_mutex;
    bool m_running = false;
    std::string m_image;
    std::filesystem::path m_build_dir;
    std::chrono::steady_clock::time_point m_started;
    MmdebstrapPhases m_phases;
};

}  // namespace pybox::images
