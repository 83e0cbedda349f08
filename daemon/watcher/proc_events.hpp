// The kernel's process events as its proc connector sends them (netlink, NETLINK_CONNECTOR,
// group CN_IDX_PROC): which process forked which, and how and when each task ended. Pure: a
// datagram in, the events it carries out, so the reader of the socket (process_ends.hpp) stays
// thin and this is unit tested and fuzzed on its own.
//
// The layout is Linux's (linux/netlink.h, linux/connector.h, linux/cn_proc.h), native byte
// order: a datagram holds netlink messages (16-byte header, 4-byte aligned); each carries a
// cn_msg (20 bytes) whose payload is one proc_event (what, cpu, timestamp_ns, then the event's
// data). Anything else in a datagram (other message types, other connector ids, events PyBox does
// not use, a payload too short for its event) is skipped; a message whose length runs past the
// datagram ends the parse. Times are the kernel's ktime_get_ns(): CLOCK_MONOTONIC, the clock of
// the daemon's MonoClock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

namespace pybox::watcher {

// A new process (not a thread): `child` was forked by the process `parent` (thread group ids).
struct ProcFork {
    std::int64_t parent = 0;
    std::int64_t child = 0;
    std::int64_t mono_ns = 0;
};

// A thread group leader ended (its process, as far as its parent's wait is concerned) with
// `wait_status` as waitpid() would report it: WIFEXITED / WEXITSTATUS, WIFSIGNALED / WTERMSIG.
struct ProcExit {
    std::int64_t pid = 0;
    std::uint32_t wait_status = 0;
    std::int64_t mono_ns = 0;

    bool exited() const { return (wait_status & 0x7f) == 0; }
    int exit_code() const { return static_cast<int>((wait_status >> 8) & 0xff); }
    int signal() const { return static_cast<int>(wait_status & 0x7f); }
};

// The kernel's answer to the subscription: 0, or the errno that refused it (EPERM without
// CAP_NET_ADMIN).
struct ProcAck {
    std::uint32_t error = 0;
};

using ProcEvent = std::variant<ProcFork, ProcExit, ProcAck>;

std::vector<ProcEvent> parse_proc_events(std::span<const std::byte> datagram);

// The subscription message (PROC_CN_MCAST_LISTEN) the socket sends once bound, for `port` (the
// netlink port id; 0 lets the kernel take it from the socket).
std::vector<std::byte> proc_listen_message(std::uint32_t port);

}  // namespace pybox::watcher
