#include "daemon/model/model_key.hpp"

#include "common/api_error_codes.hpp"
#include "common/private_file.hpp"
#include "daemon/model/model_limits.hpp"

#include <algorithm>
#include <cstdlib>

namespace pybox::model {

namespace {

Error unavailable(std::string sentence) { return make_error(api_error::k_model_key_unavailable, std::move(sentence)); }

}  // namespace

bool is_variable_name(std::string_view name)
{
    return !name.empty() && name.size() <= 128 && !(name.front() >= '0' && name.front() <= '9') &&
           std::all_of(name.begin(), name.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
           });
}

Expected<ModelKey> key_from_text(std::string_view text, std::string_view where)
{
    if (text.ends_with("\r\n")) text.remove_suffix(2);
    else if (text.ends_with("\n")) text.remove_suffix(1);
    if (text.empty()) return unavailable("The model key in " + std::string(where) + " is empty.");
    if (text.size() > k_max_key_bytes)
        return unavailable("The model key in " + std::string(where) + " is longer than " +
                           std::to_string(k_max_key_bytes) + " bytes.");
    if (!std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; }))
        return unavailable("The model key in " + std::string(where) +
                           " holds a space, a line break or a byte that is not printable ASCII; it must be one line "
                           "of printable characters.");
    return ModelKey(std::string(text));
}

std::string describe_key_source(const KeySource& source)
{
    if (const auto* variable = std::get_if<KeyFromEnvironment>(&source))
        return "the environment variable " + variable->variable;
    return "the file " + std::get<KeyFromFile>(source).file.string();
}

Expected<ModelKey> load_model_key(const KeySource& source)
{
    const std::string where = describe_key_source(source);
    if (const auto* variable = std::get_if<KeyFromEnvironment>(&source)) {
        const char* value = std::getenv(variable->variable.c_str());
        if (value == nullptr)
            return unavailable("The model key is read from " + where + ", which pyboxd's environment does not set.");
        return key_from_text(value, where);
    }
    auto text = read_private_file(std::get<KeyFromFile>(source).file, k_max_key_bytes + 2);
    if (!text) return unavailable("The model key cannot be read: " + text.error().message);
    return key_from_text(*text, where);
}

}  // namespace pybox::model
