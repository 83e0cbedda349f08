#include "daemon/watcher/proc_events.hpp"

#include <cstring>

namespace pybox::watcher {

namespace {

// linux/netlink.h, linux/connector.h, linux/cn_proc.h.
constexpr std::size_t k_nlmsg_header = 16;
constexpr std::size_t k_nlmsg_align = 4;
constexpr std::uint16_t k_nlmsg_done = 3;
constexpr std::size_t k_cn_msg_header = 20;
constexpr std::uint32_t k_cn_idx_proc = 1;
constexpr std::uint32_t k_cn_val_proc = 1;
constexpr std::uint32_t k_proc_cn_mcast_listen = 1;
// proc_event: what (4), cpu (4), timestamp_ns (8), then event_data.
constexpr std::size_t k_event_data = 16;
constexpr std::uint32_t k_proc_event_none = 0;
constexpr std::uint32_t k_proc_event_fork = 0x00000001;
constexpr std::uint32_t k_proc_event_exit = 0x80000000;
// fork_proc_event: parent_pid, parent_tgid, child_pid, child_tgid.
// exit_proc_event: process_pid, process_tgid, exit_code, exit_signal (newer kernels add more).
constexpr std::size_t k_four_u32 = 16;

template <typename T>
T read_at(std::span<const std::byte> bytes, std::size_t offset)
{
    T value{};
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return value;
}

template <typename T>
void write_at(std::vector<std::byte>& bytes, std::size_t offset, T value)
{
    std::memcpy(bytes.data() + offset, &value, sizeof value);
}

void parse_event(std::span<const std::byte> event, std::vector<ProcEvent>& out)
{
    if (event.size() < k_event_data + 4) return;
    const auto what = read_at<std::uint32_t>(event, 0);
    const auto mono_ns = static_cast<std::int64_t>(read_at<std::uint64_t>(event, 8));
    const auto field = [&](std::size_t index) { return read_at<std::uint32_t>(event, k_event_data + 4 * index); };
    if (what == k_proc_event_none) {
        out.push_back(ProcAck{field(0)});
        return;
    }
    if (event.size() < k_event_data + k_four_u32) return;
    if (what == k_proc_event_fork) {
        // A thread shares its parent's thread group: child_pid != child_tgid.
        if (field(2) != field(3)) return;
        out.push_back(ProcFork{field(1), field(3), mono_ns});
    } else if (what == k_proc_event_exit) {
        // Only the leader's end is the process's: a thread's pid differs from its group's.
        if (field(0) != field(1)) return;
        out.push_back(ProcExit{field(0), field(2), mono_ns});
    }
}

}  // namespace

std::vector<ProcEvent> parse_proc_events(std::span<const std::byte> datagram)
{
    std::vector<ProcEvent> events;
    std::size_t offset = 0;
    while (datagram.size() - offset >= k_nlmsg_header) {
        const auto length = read_at<std::uint32_t>(datagram, offset);
        if (length < k_nlmsg_header || length > datagram.size() - offset) break;
        const auto message = datagram.subspan(offset + k_nlmsg_header, length - k_nlmsg_header);
        if (message.size() >= k_cn_msg_header && read_at<std::uint32_t>(message, 0) == k_cn_idx_proc &&
            read_at<std::uint32_t>(message, 4) == k_cn_val_proc) {
            const auto payload_length = read_at<std::uint16_t>(message, 16);
            if (payload_length <= message.size() - k_cn_msg_header)
                parse_event(message.subspan(k_cn_msg_header, payload_length), events);
        }
        const std::size_t aligned = (length + k_nlmsg_align - 1) / k_nlmsg_align * k_nlmsg_align;
        if (aligned >= datagram.size() - offset) break;
        offset += aligned;
    }
    return events;
}

std::vector<std::byte> proc_listen_message(std::uint32_t port)
{
    constexpr std::size_t k_payload = 4;
    constexpr std::size_t k_total = k_nlmsg_header + k_cn_msg_header + k_payload;
    std::vector<std::byte> message(k_total);
    write_at<std::uint32_t>(message, 0, static_cast<std::uint32_t>(k_total));
    write_at<std::uint16_t>(message, 4, k_nlmsg_done);
    write_at<std::uint32_t>(message, 12, port);
    write_at<std::uint32_t>(message, k_nlmsg_header, k_cn_idx_proc);
    write_at<std::uint32_t>(message, k_nlmsg_header + 4, k_cn_val_proc);
    write_at<std::uint16_t>(message, k_nlmsg_header + 16, static_cast<std::uint16_t>(k_payload));
    write_at<std::uint32_t>(message, k_nlmsg_header + k_cn_msg_header, k_proc_cn_mcast_listen);
    return message;
}

}  // namespace pybox::watcher
