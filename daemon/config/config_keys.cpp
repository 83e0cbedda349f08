#include "daemon/config/config_keys.hpp"

#include <algorithm>
#include <array>

namespace pybox::config {

namespace {

constexpr auto k_top = k_top_section;
constexpr auto k_model = k_model_section;
constexpr auto k_engines = k_engines_section;

constexpr std::array k_keys{
    ConfigKey{k_top, "engine_socket", KeyType::path, "none",
              "An existing engine's unix socket (at most 107 bytes), used instead of the private engine"},
    ConfigKey{k_top, "dockerd", KeyType::path, "/usr/sbin/dockerd",
              "The dockerd the private engine runs; $PATH is never searched"},
    ConfigKey{k_top, "runtime", KeyType::text, "runc",
              "The OCI runtime of the boxes: 1-64 letters, digits, '.', '_' or '-'"},
    ConfigKey{k_top, "recipes_dir", KeyType::path, "none",
              "The folder of image recipes (NAME/recipe, NAME/lock) instead of the installed ones"},
    ConfigKey{k_top, "image_tar_cache_dir", KeyType::path, "none",
              "A folder keeping built image tars by recipe SHA-256, imported instead of building again"},
    ConfigKey{k_top, "stdlib_image", KeyType::text, "none (macOS: the seed's python@sha256:...)",
              "A pinned REGISTRY/REPO@sha256:DIGEST that pybox setup takes the stdlib image from instead of building it"},
    ConfigKey{k_top, "watcher", KeyType::boolean, "true", "Whether the kernel watcher samples each box's cgroup"},
    ConfigKey{k_top, "watcher_script", KeyType::path, "none",
              "A watcher script to run instead of the built-in one (tests, debugging)"},
    ConfigKey{k_top, "box_expiry_s", KeyType::whole_number, "120",
              "Seconds until a box's pybox.expires label passes, 1-3600"},
    ConfigKey{k_top, "settle_after_expiry_s", KeyType::whole_number, "60",
              "Seconds after the expiry until the sweep settles an unconfirmed run, 0-3600"},
    ConfigKey{k_top, "sweep_interval_s", KeyType::whole_number, "30", "Seconds between sweeps, 1-3600"},
    ConfigKey{k_top, "warm_boxes", KeyType::whole_number, "1", "Warm boxes kept ready per engine, 0-4"},
    ConfigKey{k_top, "engines", KeyType::array, "[]",
              "Engines beside the local one, at most 8, each an object of the engines[] section"},
    ConfigKey{k_top, "local_engine", KeyType::boolean, "true",
              "Whether the local engine takes runs; false needs an entry in engines"},
    ConfigKey{k_top, "model", KeyType::object, "none", "The model service the daemon asks: the model section"},
    ConfigKey{k_top, "unsealed_python", KeyType::path, "/usr/bin/python3",
              "The client's: the interpreter of pybox exec --unsealed; the daemon only checks the path"},

    ConfigKey{k_model, "base_url", KeyType::text, "https://integrate.api.nvidia.com",
              "The chat-completions service's https URL (model_url.hpp)"},
    ConfigKey{k_model, "model", KeyType::text, "required",
              "The model's name: 1-256 printable ASCII characters without spaces"},
    ConfigKey{k_model, "api_key_env", KeyType::text, "none",
              "The environment variable holding the key; exactly one of it and api_key_file"},
    ConfigKey{k_model, "api_key_file", KeyType::path, "none",
              "The file holding the key; exactly one of it and api_key_env"},
    ConfigKey{k_model, "ca_file", KeyType::path, "none", "A PEM file of CA certificates added to the system's"},
    ConfigKey{k_model, "temperature", KeyType::number, "0.2", "The sampling temperature asked for, 0-2"},
    ConfigKey{k_model, "max_tokens", KeyType::whole_number, "4096", "The most tokens an answer may have, 1-32768"},
    ConfigKey{k_model, "answer_timeout_s", KeyType::whole_number, "120",
              "Seconds an answer may take, 1-600"},

    ConfigKey{k_engines, "id", KeyType::text, "required",
              "The engine's id: 1-32 of a-z, 0-9 and '-', unique, not \"local\""},
    ConfigKey{k_engines, "kind", KeyType::text, "docker", "The engine's kind: docker or kubernetes"},
    ConfigKey{k_engines, "url", KeyType::text, "required",
              "A docker engine's unix:///abs/docker.sock or ssh://user@host[:port]; required for docker"},
    ConfigKey{k_engines, "engine_socket", KeyType::path, "none",
              "An ssh engine's socket on its host (letters, digits and /._@+- only); required for ssh://"},
    ConfigKey{k_engines, "identity_file", KeyType::path, "none",
              "The private key an ssh engine is logged in with, on this host; required for ssh://"},
    ConfigKey{k_engines, "known_hosts", KeyType::path, "none",
              "An ssh engine's pinned host key as a known_hosts file; exactly one of it and host_key"},
    ConfigKey{k_engines, "host_key", KeyType::text, "none",
              "An ssh engine's pinned host key, SHA256: and 43 base64 characters; exactly one of it and known_hosts"},
    ConfigKey{k_engines, "kubeconfig", KeyType::path, "none",
              "A kubernetes engine's kubeconfig, on this host, read by the backend; required for kubernetes"},
    ConfigKey{k_engines, "context", KeyType::text, "none",
              "A kubernetes engine's context in its kubeconfig, 1-253 visible ASCII; none: its current-context"},
    ConfigKey{k_engines, "namespace", KeyType::text, "none",
              "A kubernetes engine's namespace, a DNS-1123 label; required for kubernetes"},
    ConfigKey{k_engines, "image_registry", KeyType::text, "none",
              "Where a kubernetes engine's images are pushed, HOST[:PORT]/PREFIX; required for kubernetes"},
    ConfigKey{k_engines, "max_runs", KeyType::whole_number, "8",
              "A kubernetes engine's programs at once, 1-64"},
    ConfigKey{k_engines, "pids_limit", KeyType::text, "none",
              "A kubernetes engine's \"node\" (the only value): a node's podPidsLimit above the seed's is accepted"},
    ConfigKey{k_engines, "node", KeyType::text, "none",
              "The node a kubernetes engine's Pods are placed on, a DNS-1123 subdomain; none: the scheduler places them"},
};

}  // namespace

std::span<const ConfigKey> config_keys() { return k_keys; }

const ConfigKey* find_config_key(std::string_view section, std::string_view name)
{
    const auto found = std::find_if(k_keys.begin(), k_keys.end(),
                                    [&](const ConfigKey& key) { return key.section == section && key.name == name; });
    return found == k_keys.end() ? nullptr : &*found;
}

std::string known_keys(std::string_view section)
{
    std::string list;
    for (const auto& key : k_keys) {
        if (key.section != section) continue;
        if (!list.empty()) list += ", ";
        list += key.name;
    }
    return list;
}

std::string_view type_name(KeyType type)
{
    switch (type) {
    case KeyType::path: return "absolute path";
    case KeyType::text: return "string";
    case KeyType::boolean: return "boolean";
    case KeyType::whole_number: return "whole number";
    case KeyType::number: return "number";
    case KeyType::array: return "array";
    case KeyType::object: return "object";
    }
    return "unknown";
}

}  // namespace pybox::config
