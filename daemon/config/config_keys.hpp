// Every key of <runtime>/config.json, in one table: its section, name, type, default and
// meaning. The readers of the sections (daemon_config, model_section, engines_section) refuse
// a key that is not in the table, and list the table's keys of the section when they do; the
// docs' key lists (docs/reference.md, docs/model.md) are checked against it
// (tests/unit/config_keys_test.cpp, tests/unit/reference_docs_test.cpp). The client reads its
// one key, unsealed_python, itself (client/unsealed/unsealed_plan.hpp): it links nothing of
// daemon/, checks the path with the same util/path_value.hpp, and a test holds its name and
// default to this table's.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace pybox::config {

// The sections of config.json: the top-level object, the object of "model", and each object
// of the "engines" array.
inline constexpr std::string_view k_top_section = "";
inline constexpr std::string_view k_model_section = "model";
inline constexpr std::string_view k_engines_section = "engines[]";

enum class KeyType {
    path,          // a string: an absolute path
    text,          // a string of the form the meaning says
    boolean,       // true or false
    whole_number,  // a JSON integer in the range the meaning says
    number,        // any JSON number in the range the meaning says
    array,         // a JSON array
    object,        // a JSON object
};

struct ConfigKey {
    std::string_view section;
    std::string_view name;
    KeyType type;
    std::string_view default_value;  // as the reader's result has it when the key is absent
    std::string_view meaning;
};

// The table, section by section, in the order the readers list the keys in their messages.
std::span<const ConfigKey> config_keys();

// The row of `name` in `section`; nullptr when the section has no such key.
const ConfigKey* find_config_key(std::string_view section, std::string_view name);

// The keys of `section` as a refusal lists them: "a, b, c".
std::string known_keys(std::string_view section);

std::string_view type_name(KeyType type);

}  // namespace pybox::config
