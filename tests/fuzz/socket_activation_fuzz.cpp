// Fuzzes the socket-activation parser (the LISTEN_* variables a service manager sets, read by
// pyboxd at start): three newline-separated fields LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES, each
// unset when it is the single byte '-' or missing. Whatever it accepts is fd 3 with a name of
// at most 255 bytes and no ':'; whatever it refuses, it refuses with a bounded sentence.
#include "daemon/server/socket_activation.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace {

constexpr int k_our_pid = 4242;

std::optional<std::string> field(std::string_view& rest)
{
    if (rest.empty()) return std::nullopt;
    const auto end = rest.find('\n');
    const auto value = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (value == "-") return std::nullopt;
    return std::string(value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    pybox::daemon::ActivationEnvironment environment;
    environment.listen_pid = field(rest);
    environment.listen_fds = field(rest);
    environment.listen_fdnames = field(rest);
    const auto parsed = pybox::daemon::parse_socket_activation(environment, k_our_pid);
    if (!parsed) {
        if (parsed.error().code != "socket_activation_invalid" || parsed.error().message.size() > 400) std::abort();
        return 0;
    }
    if (*parsed) {
        const auto& activated = **parsed;
        if (activated.fd != pybox::daemon::k_listen_fds_start || activated.name.size() > 255 ||
            activated.name.find(':') != std::string::npos || !activated.bound_path.empty())
            std::abort();
    }
    return 0;
}
