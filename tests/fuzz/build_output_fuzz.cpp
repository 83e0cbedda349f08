// mmdebstrap's output (semi-trusted: it echoes apt and the hooks): the build report parser and
// the progress phase reader must stay bounded and never crash; a report they accept yields
// only valid package names, versions and SHA-256 digests.
#include "daemon/images/build_progress.hpp"
#include "daemon/images/mmdebstrap_build.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto report = pybox::images::parse_build_report(text);
    if (report) {
        for (const auto& [name, pin] : *report) {
            if (!pybox::images::is_valid_package_name(name) || !pybox::images::is_valid_package_version(pin.version) ||
                !pybox::images::is_valid_sha256_hex(pin.sha256)) {
                std::abort();
            }
        }
    }
    pybox::images::MmdebstrapPhases phases;
    for (std::size_t at = 0; at < text.size(); at += 7) {
        phases.feed(text.substr(at, 7));
    }
    if (phases.phase().size() > pybox::images::k_max_phase_bytes) {
        std::abort();
    }
    for (const char c : phases.phase()) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
            std::abort();
        }
    }
    return 0;
}
