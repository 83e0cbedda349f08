#include "client/commands.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>

namespace pybox::client {

int fail(const Error& error)
{
    const std::string line = "pybox: " + error.message + "\n";
    write_bytes(stderr, line);
    return k_exit_pybox_failed;
}

void write_bytes(std::FILE* stream, std::string_view bytes)
{
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), stream);
    std::fflush(stream);
}

std::string json_text(const boost::json::value& object, std::string_view key)
{
    const auto* found = object.is_object() ? object.get_object().if_contains(key) : nullptr;
    if (found == nullptr || found->is_null()) return {};
    return found->is_string() ? std::string(found->get_string()) : boost::json::serialize(*found);
}

bool json_flag(const boost::json::value& object, std::string_view key)
{
    const auto* found = object.is_object() ? object.get_object().if_contains(key) : nullptr;
    return found != nullptr && found->is_bool() && found->get_bool();
}

const boost::json::array* json_list(const boost::json::value& object, std::string_view key)
{
    const auto* found = object.is_object() ? object.get_object().if_contains(key) : nullptr;
    return found != nullptr && found->is_array() ? &found->get_array() : nullptr;
}

int print(const Rendered& rendered)
{
    write_bytes(rendered.exit_code == 0 ? stdout : stderr, rendered.text);
    return rendered.exit_code;
}

}  // namespace pybox::client
