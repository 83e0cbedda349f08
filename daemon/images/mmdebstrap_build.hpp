// Building an image tar with mmdebstrap, the blocking half of `pybox setup`.
//
// build_image_tar() runs /usr/bin/mmdebstrap (never found through $PATH), once
// common/trusted_binary has found it and every folder on its way owned by root and writable by
// no one else (root_only_rule), with the recipe's
// variant, sources and SOURCE_DATE_EPOCH, and reads back what was installed. With a lock it
// pins every package (apt preferences at priority 1001 plus `--include=pkg=version`) and
// fails unless the installed set equals the lock exactly; without one it installs the newest
// versions and returns them as the new lock. Either way every installed package comes with the
// SHA-256 of the .deb it was installed from (hashed in the customize hook, before mmdebstrap's
// cleanup removes the apt cache). It blocks its thread for up to
// k_build_timeout: call it only off the event loop. Failures:
//   "lock_outdated"       the archive no longer has a pinned version, or the build differs
//                         from the lock (the message says how to refresh it)
//   "package_hash_mismatch"  a package has the pinned version but another SHA-256 than the
//                         lock's (checked before anything is imported)
//   "image_build_failed"  mmdebstrap failed otherwise or the image misses python3 (the
//                         message carries the tail of mmdebstrap's output)
//   "spawn_failed"        mmdebstrap could not be started
//   "tool_untrusted"      mmdebstrap, or a folder on its way, may be changed by someone other
//                         than root (the message names the path and why); nothing was run
// The argv and output parsers are exposed for unit tests.
#pragma once

#include "common/error.hpp"
#include "daemon/images/image_recipe.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::images {

inline constexpr const char* k_mmdebstrap = "/usr/bin/mmdebstrap";
inline constexpr std::chrono::minutes k_build_timeout{20};

struct BuildRequest {
    std::string image_name;
    Recipe recipe;
    std::optional<Lock> pins;         // nullopt: resolve the newest versions (refresh)
    std::filesystem::path tar_file;   // written by mmdebstrap; replaced if present
    std::filesystem::path temp_dir;   // mmdebstrap's TMPDIR (it unpacks the tree there)
    std::string lock_display_path;    // how messages name the lock, e.g. "images/stdlib/lock"
};

// The mmdebstrap command line (argv[0] is k_mmdebstrap).
std::vector<std::string> mmdebstrap_argv(const BuildRequest& request);

// The packages the customize hook reported with their .deb SHA-256, or "image_build_failed"
// when it reported none, an unreadable line, a package that is not fully installed or has no
// downloaded .deb, or no working python3.
Expected<Lock> parse_build_report(std::string_view output);

struct MissingPin {
    std::string package;
    std::string version;
};
// apt's "Version 'V' for 'P' was not found", if the output holds it.
std::optional<MissingPin> find_missing_pin(std::string_view output);

// "package_hash_mismatch" when a package has the pinned version but another SHA-256, else
// "lock_outdated" when `built` differs from `pins` in the set of packages or versions, else
// nothing.
std::optional<Error> compare_with_lock(const Lock& pins, const Lock& built,
                                       std::string_view lock_display_path);

// Runs mmdebstrap (blocking) and returns the installed packages; on_output sees its output as
// it arrives (on this thread).
Expected<Lock> build_image_tar(const BuildRequest& request, const std::function<void(std::string_view)>& on_output);

}  // namespace pybox::images
