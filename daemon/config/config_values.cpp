#include "daemon/config/config_values.hpp"

#include <string_view>

namespace pybox::config {

Error config_invalid(const std::filesystem::path& file, std::string_view where, std::string_view why)
{
    return make_error("config_invalid", file.string() + ": " + std::string(where) + " " + std::string(why) + ".");
}

}  // namespace pybox::config
