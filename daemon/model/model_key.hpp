// The model service's key: where it is read from and the one type that holds it.
//
// The key is read when a call is made (so a rotated key needs no restart), from the daemon's
// environment variable named in config.json (model.api_key_env) or from a file named there
// (model.api_key_file) that only the daemon's user may access (common/private_file.hpp, as ssh
// requires of private keys). Only the daemon reads it: the client never sees it. It must be
// 1-k_max_key_bytes printable ASCII characters without spaces (one trailing newline in a file is
// dropped): anything else could break the Authorization header it is sent in. No Error built
// here quotes the key or any byte of the file or variable, and ModelKey has no way to be
// printed: reveal() is called only where the header is written.
#pragma once

#include "common/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <variant>

namespace pybox::model {

struct KeyFromEnvironment {
    std::string variable;
    friend bool operator==(const KeyFromEnvironment&, const KeyFromEnvironment&) = default;
};
struct KeyFromFile {
    std::filesystem::path file;
    friend bool operator==(const KeyFromFile&, const KeyFromFile&) = default;
};
using KeySource = std::variant<KeyFromEnvironment, KeyFromFile>;

class ModelKey {
public:
    explicit ModelKey(std::string key) : m_key(std::move(key)) {}
    std::string_view reveal() const { return m_key; }

private:
    std::string m_key;
};

// Whether an environment variable name is usable: 1-128 of [A-Za-z0-9_], not starting with a digit.
bool is_variable_name(std::string_view name);

// The key in `text` (one trailing "\n" or "\r\n" dropped), or Error "model_key_unavailable" saying
// what is wrong with it without quoting it; `where` names the variable or file. Pure.
Expected<ModelKey> key_from_text(std::string_view text, std::string_view where);

// Reads the key from its source; Error "model_key_unavailable".
Expected<ModelKey> load_model_key(const KeySource& source);

// "the environment variable NVIDIA_API_KEY" or "the file /path", for messages.
std::string describe_key_source(const KeySource& source);

}  // namespace pybox::model
