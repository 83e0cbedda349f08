#include "daemon/config/config_values.hpp"

#include "common/api_error_codes.hpp"

#include <string_view>

namespace pybox::config {

Error config_invalid(const std::filesystem::path& file, std::string_view where, std::string_view why)
{
    return make_error(api_error::k_config_invalid, file.string() + ": " + std::string(where) + " " + std::string(why) + ".");
}

}  // namespace pybox::config
