// A JSON value that must name an absolute path: the one check, for the daemon's config.json
// readers and the client's own key (the unsealed runner's interpreter). Pure.
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace pybox::util {

// What is wrong with `value` as an absolute path of at most `max_length` bytes, as the end of a
// sentence naming the key ("must be a string", "must be an absolute path", "must not contain NUL
// bytes", "is longer than N bytes"); nullopt when it is one.
std::optional<std::string> absolute_path_problem(const boost::json::value& value, std::size_t max_length);

// `value` as a path, lexically normal; only for a value absolute_path_problem accepted.
std::filesystem::path normal_path(const boost::json::value& value);

}  // namespace pybox::util
