// The reader of config.json's "engines" (its keys in config_keys.hpp's engines[] section): the
// engines beside the local one, each one JSON object {"id": ID, "kind": KIND, ...}: a docker
// entry's "url" and ssh keys, or a kubernetes entry's "kubeconfig", "namespace",
// "image_registry" and optional keys, read into the engine::EngineEntry values
// daemon/engine/engine_entry.hpp describes. At most engine::k_max_extra_engines entries, ids
// unique. Unknown keys, a key of the other kind (named), missing keys and malformed values are
// refused with "config_invalid" naming the entry. No file an entry names is read here (the
// kubeconfig is the backend's to read). Pure; unit-tested.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_entry.hpp"

#include <boost/json/value.hpp>

#include <filesystem>
#include <vector>

namespace pybox::config {

// Parses config.json's "engines" array; `file` is only used in messages.
Expected<std::vector<engine::EngineEntry>> parse_engine_entries(const boost::json::value& value,
                                                                const std::filesystem::path& file);

}  // namespace pybox::config
