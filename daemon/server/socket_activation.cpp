#include "daemon/server/socket_activation.hpp"

#include "common/api_error_codes.hpp"
#include "common/process.hpp"
#include "common/socket_facts.hpp"

#include <cstdint>
#include <cstdlib>

namespace pybox::daemon {

namespace {

constexpr std::size_t k_max_digits = 10;
constexpr std::size_t k_max_name_bytes = 255;
constexpr const char* k_variables[] = {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"};

Error invalid(const std::string& sentence)
{
    return make_error(api_error::k_socket_activation_invalid, "Socket activation: " + sentence);
}

// A non-negative decimal number of at most k_max_digits digits, or nullopt.
std::optional<std::uint64_t> decimal(const std::string& text)
{
    if (text.empty() || text.size() > k_max_digits) return std::nullopt;
    std::uint64_t value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return value;
}

std::optional<std::string> variable(const char* name)
{
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
}

}  // namespace

Expected<std::optional<ActivatedSocket>> parse_socket_activation(const ActivationEnvironment& environment, int our_pid)
{
    if (!environment.listen_fds || !environment.listen_pid) return std::nullopt;
    const auto pid = decimal(*environment.listen_pid);
    if (!pid || *pid == 0)
        return invalid("LISTEN_PID is \"" + environment.listen_pid->substr(0, k_max_digits + 1) +
                       "\", not a process ID.");
    if (*pid != static_cast<std::uint64_t>(our_pid)) return std::nullopt;
    const auto count = decimal(*environment.listen_fds);
    if (!count)
        return invalid("LISTEN_FDS is \"" + environment.listen_fds->substr(0, k_max_digits + 1) +
                       "\", not a number of file descriptors.");
    if (*count == 0) return std::nullopt;
    if (*count != 1)
        return invalid("the service manager passed " + std::to_string(*count) +
                       " sockets (LISTEN_FDS); pyboxd listens on exactly one, so its .socket unit must have "
                       "one ListenStream=.");
    ActivatedSocket activated{k_listen_fds_start, {}, {}};
    if (environment.listen_fdnames) {
        const auto& names = *environment.listen_fdnames;
        if (names.find(':') != std::string::npos)
            return invalid("LISTEN_FDNAMES names more sockets than the one LISTEN_FDS passes.");
        if (names.size() > k_max_name_bytes)
            return invalid("LISTEN_FDNAMES is longer than " + std::to_string(k_max_name_bytes) + " bytes.");
        activated.name = names;
    }
    return activated;
}

Expected<std::optional<ActivatedSocket>> adopt_activated_socket()
{
    const ActivationEnvironment environment{variable("LISTEN_PID"), variable("LISTEN_FDS"),
                                            variable("LISTEN_FDNAMES")};
    for (const char* name : k_variables) ::unsetenv(name);
    auto activated = parse_socket_activation(environment, current_pid());
    if (!activated || !*activated) return activated;
    auto path = adopt_listening_unix_socket((*activated)->fd);
    if (!path) return path.error();
    (*activated)->bound_path = std::move(*path);
    return activated;
}

}  // namespace pybox::daemon
