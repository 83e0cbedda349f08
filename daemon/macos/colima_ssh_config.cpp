#include "daemon/macos/colima_ssh_config.hpp"

#include "common/api_error_codes.hpp"
#include "common/sha256.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>

namespace pybox::macos {

namespace {

Error invalid(const std::string& why)
{
    return make_error(api_error::k_colima_output_invalid, "colima ssh-config is not what PyBox expects: " + why + ".");
}

std::string lower(std::string_view text)
{
    std::string result(text);
    std::transform(result.begin(), result.end(), result.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    return result;
}

// Read and ignored: they tune OpenSSH's client, which PyBox does not run for this.
constexpr std::array<std::string_view, 11> k_ignored_keys = {
    "stricthostkeychecking", "nohostauthenticationforlocalhost", "preferredauthentications", "compression",
    "batchmode", "identitiesonly", "gssapiauthentication", "ciphers", "controlmaster", "controlpath", "controlpersist"};
// Must say "no" when present.
constexpr std::array<std::string_view, 3> k_forwarding_keys = {"forwardagent", "forwardx11", "forwardx11trusted"};
// Read once each.
constexpr std::array<std::string_view, 5> k_target_keys = {"identityfile", "user", "hostname", "port",
                                                           "userknownhostsfile"};

bool printable(std::string_view text)
{
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f; });
}

std::string_view unquoted(std::string_view value)
{
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') return value.substr(1, value.size() - 2);
    return value;
}

}  // namespace

Expected<ColimaSshConfig> parse_colima_ssh_config(std::string_view text, const ColimaLayout& layout)
{
    if (text.size() > k_max_ssh_config_bytes) return invalid("it is over " + std::to_string(k_max_ssh_config_bytes) + " bytes");
    bool in_host = false;
    std::size_t number = 0;
    std::map<std::string, std::string> values;
    while (!text.empty()) {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (++number > k_max_ssh_config_lines) return invalid("it has over " + std::to_string(k_max_ssh_config_lines) + " lines");
        const auto where = "line " + std::to_string(number);
        if (!printable(line)) return invalid(where + " has a control or non-ASCII byte");
        const auto first = line.find_first_not_of(' ');
        if (first == std::string_view::npos || line[first] == '#') continue;
        line.remove_prefix(first);
        const auto space = line.find(' ');
        if (space == std::string_view::npos || space + 1 >= line.size())
            return invalid(where + " is not a key and a value");
        const std::string key = lower(line.substr(0, space));
        const std::string_view value = line.substr(space + 1);
        const auto quoted_key = "\"" + util::printable_excerpt(line.substr(0, space), 32) + "\"";
        if (key == "host") {
            if (in_host) return invalid(where + " starts a second Host block");
            if (value != k_lima_instance)
                return invalid(where + " names the host \"" + util::printable_excerpt(value) + "\", not " +
                               std::string(k_lima_instance));
            in_host = true;
            continue;
        }
        if (!in_host) return invalid(where + " comes before the Host line");
        if (std::find(k_ignored_keys.begin(), k_ignored_keys.end(), key) != k_ignored_keys.end()) continue;
        if (std::find(k_forwarding_keys.begin(), k_forwarding_keys.end(), key) != k_forwarding_keys.end()) {
            if (lower(value) != "no") return invalid(where + " turns on " + quoted_key);
            continue;
        }
        if (std::find(k_target_keys.begin(), k_target_keys.end(), key) == k_target_keys.end())
            return invalid(where + " has the key " + quoted_key + ", which PyBox does not accept");
        if (!values.emplace(key, std::string(unquoted(value))).second)
            return invalid(where + " repeats the key " + quoted_key);
    }
    if (!in_host) return invalid("it has no Host line");
    for (const auto required : {"identityfile", "user", "hostname", "port"})
        if (!values.contains(required)) return invalid(std::string("it lacks the key ") + required);

    ColimaSshConfig config;
    if (values["hostname"] != "127.0.0.1")
        return invalid("the VM's ssh is at \"" + util::printable_excerpt(values["hostname"]) + "\", not 127.0.0.1");
    const auto& port = values["port"];
    unsigned number_value = 0;
    const auto [port_end, port_error] = std::from_chars(port.data(), port.data() + port.size(), number_value);
    if (port_error != std::errc() || port_end != port.data() + port.size() || number_value == 0 || number_value > 65535 ||
        port.front() == '0')
        return invalid("the port \"" + util::printable_excerpt(port) + "\" is not 1-65535");
    auto address = engine::parse_ssh_address("ssh://" + values["user"] + "@127.0.0.1:" + port);
    if (!address) return invalid("the user \"" + util::printable_excerpt(values["user"]) + "\" is not a user name");
    config.address = *address;
    config.identity_file = values["identityfile"];
    if (config.identity_file != layout.lima_key)
        return invalid("the key file is " + util::printable_excerpt(values["identityfile"], 200) + ", not Lima's " +
                       layout.lima_key.string());
    if (const auto known = values.find("userknownhostsfile"); known != values.end() && known->second != "/dev/null") {
        const std::filesystem::path file = known->second;
        if (!file.is_absolute()) return invalid("UserKnownHostsFile is not an absolute path");
        config.known_hosts = file;
    }
    return config;
}

namespace {

Error bad_key(const std::string& why)
{
    return make_error(api_error::k_colima_output_invalid, "The VM's ssh host key is not an ed25519 public key: " + why + ".");
}

std::string hex_to_bytes(std::string_view hex)
{
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        unsigned value = 0;
        std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
        bytes.push_back(static_cast<char>(value));
    }
    return bytes;
}

}  // namespace

Expected<std::string> host_key_fingerprint(std::string_view public_key_line)
{
    if (public_key_line.ends_with('\n')) public_key_line.remove_suffix(1);
    if (public_key_line.size() > 1024 || !printable(public_key_line)) return bad_key("it is not one printable line");
    constexpr std::string_view type = "ssh-ed25519";
    if (!public_key_line.starts_with(std::string(type) + " ")) return bad_key("it does not start with ssh-ed25519");
    auto rest = public_key_line.substr(type.size() + 1);
    const auto encoded = rest.substr(0, rest.find(' '));
    const auto blob = util::base64_decode(encoded);
    // The blob: a 4-byte big-endian length and "ssh-ed25519", then a 4-byte length and 32 bytes.
    const std::string expected_head = std::string("\0\0\0\x0bssh-ed25519\0\0\0\x20", 19);
    if (!blob || blob->size() != expected_head.size() + 32 || !blob->starts_with(expected_head))
        return bad_key("its base64 is not an ed25519 key");
    auto fingerprint = util::base64_encode(hex_to_bytes(sha256_hex(*blob)));
    while (fingerprint.ends_with('=')) fingerprint.pop_back();
    return "SHA256:" + fingerprint;
}

std::string host_key_pin_text(std::string_view fingerprint) { return std::string(fingerprint) + "\n"; }

Expected<std::string> parse_host_key_pin(std::string_view text)
{
    if (!text.ends_with('\n') || !engine::is_sha256_fingerprint(text.substr(0, text.size() - 1)))
        return make_error(api_error::k_host_key_pin_invalid,
                          "The pinned host key of the colima VM is not one SHA256: fingerprint line; "
                          "`pybox vm stop`, delete the pin file and start again to pin the VM's key anew.");
    return std::string(text.substr(0, text.size() - 1));
}

Expected<engine::SshEngine> colima_ssh_engine(const ColimaSshConfig& config,
                                              const std::optional<std::string>& pinned_fingerprint)
{
    engine::SshEngine target;
    target.address = config.address;
    target.engine_socket = std::string(k_guest_docker_socket);
    target.identity_file = config.identity_file;
    if (config.known_hosts) {
        target.known_hosts = config.known_hosts;
    } else if (pinned_fingerprint && engine::is_sha256_fingerprint(*pinned_fingerprint)) {
        target.host_key_sha256 = pinned_fingerprint;
    } else {
        return make_error(api_error::k_host_key_unpinned,
                          "The colima VM's ssh host key is not pinned yet: `pybox vm start` pins it.");
    }
    return target;
}

}  // namespace pybox::macos
