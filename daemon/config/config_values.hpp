// The one check of a config.json value that must be an absolute path, shared by the readers of
// every section (daemon_config, model_section, engines_section). Pure.
#pragma once

#include "common/error.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::config {

// What is wrong with `value` as an absolute path of at most `max_length` bytes, as the end of a
// sentence naming the key ("must be a string", "must be an absolute path", "must not contain NUL
// bytes", "is longer than N bytes"); nullopt when it is one.
std::optional<std::string> absolute_path_problem(const boost::json::value& value, std::size_t max_length);

// Error "config_invalid" for `file`: "<file>: <where> <why>.", `where` naming the key or entry
// (`key "engine_socket"`, `engines[2]`) and `why` ending the sentence.
Error config_invalid(const std::filesystem::path& file, std::string_view where, std::string_view why);

// `value` as a path, lexically normal; only for a value absolute_path_problem accepted.
std::filesystem::path normal_path(const boost::json::value& value);

}  // namespace pybox::config
