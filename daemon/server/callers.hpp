// Who may use the daemon's socket, and as whom (docs/install.md "System mode").
//
// A per-user pyboxd serves only the user who runs it. A system pyboxd (`pyboxd --system`, run
// by root) serves root and the members of the `pybox` group; each peer is the user its uid
// (SO_PEERCRED) names, and only root manages the engine and the images. The decision is the
// pure admit(); admit_peer() gathers its facts for a connected socket, reading the group
// database at each connection, so a user taken out of the group is refused from the next one.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

enum class ServeMode { owner, system };

// The group whose members a system pyboxd serves.
inline constexpr const char* k_system_group = "pybox";

// The user a connection acts for. `admin`: may start and stop the engine, set up, build and
// remove images, and sees every user's attempts.
struct Caller {
    std::uint32_t uid = 0;
    bool admin = false;

    friend bool operator==(const Caller&, const Caller&) = default;
};

struct PeerFacts {
    std::uint32_t peer_uid = 0;
    std::uint32_t daemon_uid = 0;
    std::vector<std::uint32_t> peer_groups;     // the peer user's groups, its primary one included
    std::optional<std::uint32_t> system_group;  // the pybox group's gid, when it exists
};

// The caller, or "forbidden" with a message saying who may use this socket.
Expected<Caller> admit(ServeMode mode, const PeerFacts& facts);

// admit() for the peer of a connected unix socket.
Expected<Caller> admit_peer(ServeMode mode, int socket_fd);

// The gid of the pybox group, or nullopt when the system has none.
std::optional<std::uint32_t> system_group_id();

}  // namespace pybox::daemon
