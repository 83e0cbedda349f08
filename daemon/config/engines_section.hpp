// The reader of config.json's "engines" (its keys in config_keys.hpp's engines[] section): the
// engines beside the local one, each one JSON object {"id": ID, "kind": KIND, "url": URL, ...}, read into the
// engine::EngineEntry values daemon/engine/engine_entry.hpp describes. At most
// engine::k_max_extra_engines entries, ids unique. Unknown keys, missing keys and malformed
// values are refused with "config_invalid" naming the entry. Pure; unit-tested.
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
