// ProcessEndWatcher: the kernel's proc connector socket (netlink) on the daemon's executor,
// feeding one ProcessEndLog (process_end_log.hpp). It can only be opened by a daemon with
// CAP_NET_ADMIN in the host's first namespaces (the kernel's rule for the proc connector); open()
// says why not otherwise, and runs then go on without the kernel's record (the receipt says so).
// If the socket's buffer overflows, the events in between are lost: every box followed then is
// marked (FollowedEnds::events_lost). Closing it (stop_when_idle(), destruction) stops the
// reading.
#pragma once

#include "daemon/watcher/process_end_log.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>
#include <variant>

namespace pybox::watcher {

namespace net = boost::asio;

class ProcessEndWatcher {
public:
    // Opens and subscribes the proc connector's socket, reading it on `executor` into a log.
    // Fails with the reason (no CAP_NET_ADMIN, not Linux, a kernel without the connector).
    static std::variant<std::unique_ptr<ProcessEndWatcher>, std::string> open(net::any_io_executor executor);
    ~ProcessEndWatcher();
    ProcessEndWatcher(const ProcessEndWatcher&) = delete;
    ProcessEndWatcher& operator=(const ProcessEndWatcher&) = delete;

    ProcessEndLog& log();
    // The daemon is stopping: the socket is closed once no box is followed (at once if none
    // is), so that the reading no longer keeps the daemon's io_context running.
    void stop_when_idle();

    struct State;

private:
    explicit ProcessEndWatcher(std::shared_ptr<State> state) : m_state(std::move(state)) {}
    std::shared_ptr<State> m_state;
};

}  // namespace pybox::watcher
