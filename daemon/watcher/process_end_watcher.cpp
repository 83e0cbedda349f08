#include "daemon/watcher/process_end_watcher.hpp"

#include "common/posix.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <span>

#ifdef __linux__
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#endif

namespace pybox::watcher {

struct ProcessEndWatcher::State {
    State(const net::any_io_executor& executor, int fd) : socket(executor, fd) {}
    net::posix::stream_descriptor socket;
    ProcessEndLog log;
    bool stopping = false;

    void close()
    {
        boost::system::error_code ignored;
        socket.close(ignored);
    }
};

namespace {

// Largest datagram the connector sends is one small event; a page holds several.
constexpr std::size_t k_datagram_bytes = 8192;
// The socket's receive buffer: room for bursts of a busy host's forks and exits.
constexpr int k_receive_buffer_bytes = 4 * 1024 * 1024;
constexpr int k_ack_wait_ms = 1000;

#ifdef __linux__
// Reads what is queued; false when the socket failed for good.
bool drain(ProcessEndWatcher::State& state)
{
    std::array<std::byte, k_datagram_bytes> buffer{};
    for (;;) {
        const ssize_t got = ::recv(state.socket.native_handle(), buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOBUFS) {
                state.log.lost_events();
                continue;
            }
            return errno == EAGAIN || errno == EWOULDBLOCK;
        }
        for (const auto& event : parse_proc_events(std::span(buffer.data(), static_cast<std::size_t>(got))))
            state.log.record(event);
    }
}

void wait_readable(const std::shared_ptr<ProcessEndWatcher::State>& state)
{
    state->socket.async_wait(net::posix::stream_descriptor::wait_read,
                             [weak = std::weak_ptr(state)](const boost::system::error_code& ec) {
                                 auto alive = weak.lock();
                                 if (ec || !alive) return;
                                 if (drain(*alive)) wait_readable(alive);
                             });
}

// Waits for the kernel's answer to the subscription, keeping any event that comes first.
std::string await_ack(int fd, ProcessEndLog& log)
{
    std::array<std::byte, k_datagram_bytes> buffer{};
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_ack_wait_ms);
    while (std::chrono::steady_clock::now() < until) {
        pollfd ready{fd, POLLIN, 0};
        if (::poll(&ready, 1, k_ack_wait_ms) <= 0) break;
        const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS) continue;
            return "reading the kernel's proc connector failed: " + errno_text(errno);
        }
        for (const auto& event : parse_proc_events(std::span(buffer.data(), static_cast<std::size_t>(got)))) {
            if (const auto* ack = std::get_if<ProcAck>(&event)) {
                if (ack->error == 0) return "";
                return "the kernel's proc connector refused the subscription: " +
                       errno_text(static_cast<int>(ack->error)) + " (it needs CAP_NET_ADMIN)";
            }
            log.record(event);
        }
    }
    return "the kernel's proc connector did not answer the subscription within 1 s (it answers only a daemon in "
           "the host's first pid and user namespaces)";
}
#endif

}  // namespace

std::variant<std::unique_ptr<ProcessEndWatcher>, std::string> ProcessEndWatcher::open(net::any_io_executor executor)
{
#ifdef __linux__
    UniqueFd fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR));
    if (fd.get() < 0) return "the kernel's proc connector could not be opened: " + errno_text(errno);
    const int buffer_bytes = k_receive_buffer_bytes;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0)
        (void)::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
    sockaddr_nl address{};
    address.nl_family = AF_NETLINK;
    address.nl_groups = 1;  // CN_IDX_PROC
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
        return "the kernel's proc connector could not be joined: " + errno_text(errno) + " (it needs CAP_NET_ADMIN)";
    socklen_t length = sizeof address;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
        return "the proc connector socket has no address: " + errno_text(errno);
    const auto listen = proc_listen_message(address.nl_pid);
    if (::send(fd.get(), listen.data(), listen.size(), 0) < 0)
        return "the kernel's proc connector refused the subscription: " + errno_text(errno);
    ProcessEndLog early;
    if (auto refused = await_ack(fd.get(), early); !refused.empty()) return refused;
    auto state = std::make_shared<State>(executor, fd.release());
    state->log = std::move(early);
    const std::weak_ptr<State> weak = state;
    state->log.set_feeder(
        [weak] {
            if (auto alive = weak.lock(); alive && alive->socket.is_open()) (void)drain(*alive);
        },
        [weak] {
            if (auto alive = weak.lock(); alive && alive->stopping) alive->close();
        });
    wait_readable(state);
    return std::unique_ptr<ProcessEndWatcher>(new ProcessEndWatcher(std::move(state)));
#else
    (void)executor;
    return std::string("the kernel's process events are read only on Linux");
#endif
}

ProcessEndWatcher::~ProcessEndWatcher() { m_state->close(); }

void ProcessEndWatcher::stop_when_idle()
{
    m_state->stopping = true;
    if (m_state->log.followed_count() == 0) m_state->close();
}

ProcessEndLog& ProcessEndWatcher::log() { return m_state->log; }

}  // namespace pybox::watcher
