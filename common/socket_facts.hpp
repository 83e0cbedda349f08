// What the kernel says about one inherited file descriptor that should be a listening unix
// socket (socket activation, daemon/server/socket_activation.hpp): one thin platform call,
// which checks and never changes the socket except for its close-on-exec flag.
#pragma once

#include "common/error.hpp"

#include <filesystem>

namespace pybox {

// Checks that `fd` is open and is a listening AF_UNIX SOCK_STREAM socket (SO_TYPE,
// SO_ACCEPTCONN, getsockname), sets FD_CLOEXEC on it, and returns the path it is bound to
// (empty for an unnamed or abstract socket). Fails with "socket_activation_invalid" and a
// sentence naming what is wrong.
Expected<std::filesystem::path> adopt_listening_unix_socket(int fd);

}  // namespace pybox
