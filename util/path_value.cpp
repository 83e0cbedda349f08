#include "util/path_value.hpp"

#include <string_view>

namespace pybox::util {

std::optional<std::string> absolute_path_problem(const boost::json::value& value, std::size_t max_length)
{
    const auto* text = value.if_string();
    if (text == nullptr) return "must be a string";
    const std::string_view view = *text;
    if (view.empty() || view.front() != '/') return "must be an absolute path";
    if (view.find('\0') != std::string_view::npos) return "must not contain NUL bytes";
    if (view.size() > max_length) return "is longer than " + std::to_string(max_length) + " bytes";
    return std::nullopt;
}

std::filesystem::path normal_path(const boost::json::value& value)
{
    return std::filesystem::path(std::string(value.get_string())).lexically_normal();
}

}  // namespace pybox::util
