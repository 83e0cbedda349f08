// Socket activation: the listening socket a service manager (systemd's pyboxd.socket) hands to
// pyboxd, as sd_listen_fds(3) defines it. LISTEN_PID names the process the sockets are for,
// LISTEN_FDS how many there are (from fd 3 on), LISTEN_FDNAMES their names, ':'-separated.
//
// Contract:
// - parse_socket_activation() is pure: the three variables' values (nullopt when unset) and our
//   pid in, the decision out. Not activated (nullopt) when LISTEN_FDS is unset or 0, when
//   LISTEN_PID is unset, or when LISTEN_PID names another process (variables inherited from a
//   parent that was activated). Otherwise each value must be plain decimal digits (at most 10),
//   exactly one fd must be passed (pyboxd listens on one socket), and LISTEN_FDNAMES, when set,
//   must hold exactly one name of at most 255 bytes; anything else fails with
//   "socket_activation_invalid" and a sentence naming the variable and what is wrong with it.
// - adopt_activated_socket() reads the variables from the environment and always unsets them,
//   so no child (dockerd, mmdebstrap, ssh) inherits them; then checks the fd (a listening
//   AF_UNIX SOCK_STREAM socket) and makes it close-on-exec. The caller owns the returned fd.
//   Call it first thing in main, before any thread exists (it changes the environment).
#pragma once

#include "common/error.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace pybox::daemon {

// The first fd a service manager passes (SD_LISTEN_FDS_START).
inline constexpr int k_listen_fds_start = 3;

struct ActivationEnvironment {
    std::optional<std::string> listen_pid;
    std::optional<std::string> listen_fds;
    std::optional<std::string> listen_fdnames;
};

struct ActivatedSocket {
    int fd = -1;
    std::string name;                 // from LISTEN_FDNAMES, empty when not given
    std::filesystem::path bound_path; // what the socket is bound to (adopt_activated_socket only)
};

Expected<std::optional<ActivatedSocket>> parse_socket_activation(const ActivationEnvironment& environment, int our_pid);

Expected<std::optional<ActivatedSocket>> adopt_activated_socket();

}  // namespace pybox::daemon
