// The daemon's configuration file, <runtime>/config.json, and the reader of its top-level keys
// (config_keys.hpp has the table of every key). The file is optional: without it the daemon
// runs its private engine with the defaults below.
//
// Strict and bounded: the file is read up to k_max_config_bytes, must be one JSON object, and
// unknown keys, wrong types and relative paths are refused with an Error ("config_invalid")
// whose message names the key and the file. Pure parsing is separate from reading the file so
// it can be tested and fuzzed without a disk.
#pragma once

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/paths.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/model/model_config.hpp"
#include "daemon/registry/pinned_reference.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::config {

inline constexpr std::size_t k_max_config_bytes = 64 * 1024;

// The stdlib image this platform takes by its pinned digest when config.json names none:
// macOS's seed image, nothing on Linux.
std::optional<registry::PinnedReference> platform_stdlib_image();

struct DaemonConfig {
    // An existing engine to use instead of the private one (the same checks apply).
    std::optional<std::filesystem::path> engine_socket;
    // The dockerd binary the private engine runs (absolute; $PATH is never searched).
    std::filesystem::path dockerd = "/usr/sbin/dockerd";
    // The OCI runtime boxes run under; it must be listed in the engine's /info Runtimes.
    std::string runtime = "runc";
    // Where image recipes are read from, instead of the installed ones.
    std::optional<std::filesystem::path> recipes_dir;
    // Where built image tars are kept, named NAME-<recipe SHA-256>.tar, so that a later setup
    // (in another runtime folder, e.g. the next CI run) imports the tar of the same recipe and
    // lock instead of building it again; a changed recipe or lock has another name, so it builds.
    std::optional<std::filesystem::path> image_tar_cache_dir;
    // Where `pybox setup` takes the stdlib image from instead of building it: an image pinned
    // by its manifest digest (daemon/registry/pinned_reference.hpp), pulled by the engine and
    // checked (daemon/registry/image_pull.hpp). None on Linux, where it is built; on macOS,
    // where nothing can be built, the seed's (registry::k_seed_stdlib_image).
    std::optional<registry::PinnedReference> stdlib_image = platform_stdlib_image();
    // Whether the kernel watcher samples each box's cgroup (observed.resources). Off only to
    // measure what it costs: a run without it reports its resources as UNKNOWN.
    bool watcher = true;
    // A watcher script to run instead of the built-in one, for tests and debugging (its
    // SHA-256 is in every receipt, like the built-in one's).
    std::optional<std::filesystem::path> watcher_script;
    // How long a box is kept before the sweep may remove it (its pybox.expires label, 1-3600 s),
    // how long after that an unconfirmed run is settled (0-3600 s), and how often the sweep runs
    // (1-3600 s). Shorter than the defaults only for tests and operators: the sweep never touches
    // a run in progress, whatever its expiry.
    std::int64_t box_expiry_s = limits::k_box_expiry_s;
    std::int64_t settle_after_expiry_s = limits::k_settle_after_expiry_s;
    std::int64_t sweep_interval_s = limits::k_sweep_interval_s;
    // Warm boxes kept ready per engine (0-4; 0: every run cold). None when box_expiry_s leaves a
    // warm box no time to wait (daemon/run/warm_box_keeper.hpp).
    int warm_boxes = limits::k_default_warm_boxes;
    // Engines beside the local one (engine_entry.hpp), and whether the local engine (private or
    // engine_socket) takes runs too; false leaves runs to the named engines only.
    std::vector<engine::EngineEntry> engines;
    bool local_engine = true;
    // The model service the daemon asks (model_config.hpp, docs/model.md); none: no model.
    std::optional<model::ModelConfig> model;
};

// Parses the text of a config file; `file` is only used in messages.
Expected<DaemonConfig> parse_daemon_config(std::string_view text, const std::filesystem::path& file);

// Reads paths.config_file(); a missing file yields the defaults.
Expected<DaemonConfig> load_daemon_config(const RuntimePaths& paths);

// The private engine's socket: <runtime>/engine/docker.sock.
std::filesystem::path private_engine_socket(const RuntimePaths& paths);
// The engine socket the daemon talks to: the configured one, else the private engine's.
std::filesystem::path engine_socket_path(const DaemonConfig& config, const RuntimePaths& paths);

}  // namespace pybox::config
