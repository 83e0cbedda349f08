// The error of a config.json reader, shared by the readers of every section (daemon_config,
// model_section, engines_section); their paths are checked by util/path_value.hpp. Pure.
#pragma once

#include "common/error.hpp"

#include <filesystem>
#include <string_view>

namespace pybox::config {

// Error "config_invalid" for `file`: "<file>: <where> <why>.", `where` naming the key or entry
// (`key "engine_socket"`, `engines[2]`) and `why` ending the sentence.
Error config_invalid(const std::filesystem::path& file, std::string_view where, std::string_view why);

}  // namespace pybox::config
