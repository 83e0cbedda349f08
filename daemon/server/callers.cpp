#include "daemon/server/callers.hpp"

#include "common/api_error_codes.hpp"
#include "common/process.hpp"

#include <algorithm>

namespace pybox::daemon {

Expected<Caller> admit(ServeMode mode, const PeerFacts& facts)
{
    if (mode == ServeMode::owner) {
        if (facts.peer_uid == facts.daemon_uid) return Caller{facts.peer_uid, true};
        return make_error(api_error::k_forbidden, "Only the user who runs pyboxd may use its socket.");
    }
    if (facts.peer_uid == 0) return Caller{0, true};
    if (!facts.system_group)
        return make_error(api_error::k_forbidden, "This is the system pyboxd, which serves root and the members of the " +
                                           std::string(k_system_group) + " group, and this machine has no " +
                                           k_system_group + " group. An administrator creates it with: addgroup "
                                           "--system " + k_system_group);
    if (std::ranges::find(facts.peer_groups, *facts.system_group) != facts.peer_groups.end())
        return Caller{facts.peer_uid, false};
    return make_error(api_error::k_forbidden, "This is the system pyboxd: only root and the members of the " +
                                       std::string(k_system_group) + " group may use it, and uid " +
                                       std::to_string(facts.peer_uid) + " is not one. An administrator adds a user "
                                       "with: adduser USER " + k_system_group + " (it takes effect at the user's "
                                       "next login).");
}

std::optional<std::uint32_t> system_group_id() { return group_id(k_system_group); }

Expected<Caller> admit_peer(ServeMode mode, int socket_fd)
{
    const auto uid = socket_peer_uid(socket_fd);
    if (!uid) return make_error(api_error::k_forbidden, uid.error().message);
    PeerFacts facts{*uid, current_uid(), {}, std::nullopt};
    if (mode == ServeMode::system && *uid != 0) {
        for (const unsigned gid : groups_of_user(*uid)) facts.peer_groups.push_back(gid);
        facts.system_group = system_group_id();
    }
    return admit(mode, facts);
}

}  // namespace pybox::daemon
