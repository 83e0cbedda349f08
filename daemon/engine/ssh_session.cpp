#include "daemon/engine/ssh_session.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/engine/ssh_connect.hpp"
#include "daemon/engine/ssh_rules.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace pybox::engine {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Stream = net::local::stream_protocol::socket;
using detail::close_fd;
using detail::is_session_error;
using detail::last_ssh_error;

std::string seconds_text(milliseconds delay)
{
    const auto tenths = (delay.count() + 50) / 100;
    return std::to_string(tenths / 10) + (tenths % 10 != 0 ? "." + std::to_string(tenths % 10) : "") + " s";
}

enum class RequestKind { connect, stream };

struct Request {
    RequestKind kind = RequestKind::connect;
    std::string command;
    int fd = -1;  // stream: the session thread's end of the socketpair (owned)
    Clock::time_point deadline;
    std::function<void(Expected<void>)> on_ready;  // may be empty
};

struct Channel {
    LIBSSH2_CHANNEL* handle = nullptr;
    int fd = -1;  // the session thread's end of the socketpair; -1 for a spare or once closed
    std::string to_remote;
    std::string from_remote;
    bool local_done = false;   // the local end sent EOF (or is gone)
    bool eof_sent = false;
    bool remote_done = false;  // the command's stdout reached EOF
    bool local_shut = false;   // the local end was told EOF
    bool closing = false;
    bool hangup = false;       // poll() saw the local end closed
    bool spare = false;        // opened ahead for the warm command; not handed out yet
    Clock::time_point opened = Clock::now();
};

}  // namespace

class SshSession::Impl {
public:
    Impl(SshEngine engine, SshTimings timings)
        : m_engine(std::move(engine)), m_timings(timings), m_describe(describe_engine_entry(EngineEntry{"", m_engine}))
    {
        int pipe_fds[2];
        if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
        m_wake_read = pipe_fds[0];
        m_wake_write = pipe_fds[1];
        m_thread = std::thread([this] { run(); });
    }

    ~Impl()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        wake();
        m_thread.join();
        close_fd(m_wake_read);
        close_fd(m_wake_write);
    }

    const std::string& describe() const { return m_describe; }
    const SshEngine& engine() const { return m_engine; }
    int connects() const { return m_connects.load(); }
    int channels_opened() const { return m_channels_opened.load(); }

    std::optional<std::string> last_drop() const
    {
        std::lock_guard lock(m_mutex);
        return m_last_drop;
    }

    void keep_warm(std::string command)
    {
        std::lock_guard lock(m_mutex);
        m_warm_command = std::move(command);
    }

    void submit(Request request)
    {
        {
            std::lock_guard lock(m_mutex);
            if (!m_stop) {
                m_queue.push_back(std::move(request));
                wake();
                return;
            }
        }
        fail(request, make_error(api_error::k_engine_unreachable, m_describe + ": the ssh session is shutting down"));
        close_fd(request.fd);
    }

private:
    void wake()
    {
        const char byte = 1;
        [[maybe_unused]] auto written = ::write(m_wake_write, &byte, 1);
    }

    static void fail(Request& request, const Error& error)
    {
        if (request.on_ready) request.on_ready(error);
        request.on_ready = nullptr;
    }

    static ssize_t receive(libssh2_socket_t socket, void* buffer, size_t length, int flags, void** abstract)
    {
        const ssize_t got = ::recv(socket, buffer, length, flags);
        if (got < 0) return -errno;
        if (got > 0) static_cast<Impl*>(*abstract)->m_last_received = Clock::now();
        return got;
    }

    template <class Step>
    int until_done(Clock::time_point deadline, Step step)
    {
        return detail::ssh_until_done(m_link, deadline, step);
    }

    Error unreachable(const std::string& why) const
    {
        return make_error(api_error::k_engine_unreachable, "cannot reach " + m_describe + ": " + why);
    }

    Expected<void> connect(Clock::time_point deadline)
    {
        auto link = detail::connect_ssh(m_engine, m_describe, deadline,
                                        static_cast<unsigned>(m_timings.keepalive_interval.count()), this, &Impl::receive);
        if (!link) return link.error();
        m_link = *link;
        m_last_received = Clock::now();
        m_connects.fetch_add(1);
        return {};
    }

    // Ends every channel and the connection; `why` (empty when stopping) is kept for last_drop().
    void drop_session(const std::string& why = "")
    {
        for (auto& channel : m_channels) close_fd(channel.fd);
        m_channels.clear();  // libssh2_session_free frees the channel handles
        detail::close_ssh(m_link, why.empty());
        m_idle_data = false;
        if (!why.empty()) {
            m_last_error = unreachable(why);
            m_next_attempt = Clock::now();  // the next request tries again at once
            std::lock_guard lock(m_mutex);
            m_last_drop = "the ssh session to " + m_describe + " was dropped: " + why;
        }
    }

    bool up() const { return m_link.up(); }

    Error backoff_error() const
    {
        const auto wait = std::chrono::duration_cast<milliseconds>(m_next_attempt - Clock::now());
        const auto& last = m_last_error.value();
        const bool refused = last.code == api_error::k_engine_host_key_refused || last.code == api_error::k_engine_auth_refused;
        return make_error(refused ? last.code : api_error::k_engine_unreachable,
                          last.message + " (PyBox tries " + m_describe + " again in " + seconds_text(wait) + ")");
    }

    // Connects unless up; false (the request failed) when that is not possible now.
    bool make_ready(Request& request)
    {
        if (up()) return true;
        if (m_last_error && Clock::now() < m_next_attempt) {
            fail(request, backoff_error());
            return false;
        }
        const auto deadline = std::min(request.deadline, Clock::now() + m_timings.connect_timeout);
        if (auto connected = connect(deadline); !connected) {
            ++m_failures;
            m_last_error = connected.error();
            m_next_attempt = Clock::now() + reconnect_delay(m_failures, m_timings.reconnect_first, m_timings.reconnect_most);
            fail(request, connected.error());
            return false;
        }
        m_failures = 0;
        m_last_error.reset();
        return true;
    }

    // Opens the channel and runs the command; nullptr and `error` set when it cannot.
    LIBSSH2_CHANNEL* open_channel(const Request& request, Error& error, bool& session_broken)
    {
        LIBSSH2_CHANNEL* handle = nullptr;
        int rc = until_done(request.deadline, [&] {
            handle = libssh2_channel_open_session(m_link.session);
            return handle != nullptr ? 0 : libssh2_session_last_errno(m_link.session);
        });
        if (rc == 0)  // the command's stderr is dropped
            rc = until_done(request.deadline, [&] {
                return libssh2_channel_handle_extended_data2(handle, LIBSSH2_CHANNEL_EXTENDED_DATA_IGNORE);
            });
        if (rc == 0)
            rc = until_done(request.deadline, [&] {
                return libssh2_channel_process_startup(handle, "exec", 4, request.command.data(),
                                                       static_cast<unsigned>(request.command.size()));
            });
        if (rc == 0) {
            m_channels_opened.fetch_add(1);
            return handle;
        }
        session_broken = rc == LIBSSH2_ERROR_TIMEOUT || is_session_error(rc);
        if (rc == LIBSSH2_ERROR_TIMEOUT)
            error = make_error(api_error::k_engine_timeout, "opening an ssh channel to " + m_describe + " timed out");
        else if (rc == LIBSSH2_ERROR_CHANNEL_FAILURE)
            error = make_error(api_error::k_engine_unreachable, m_describe + " refused a new ssh channel (" + last_ssh_error(m_link.session) +
                                                         "; its sshd's MaxSessions may be too low)");
        else
            error = unreachable("cannot open an ssh channel: " + last_ssh_error(m_link.session));
        if (handle != nullptr && !session_broken) {
            until_done(request.deadline, [&] { return libssh2_channel_free(handle); });
        }
        return nullptr;
    }

    void start(Request& request)
    {
        if (Clock::now() >= request.deadline) {
            fail(request, make_error(api_error::k_engine_timeout, "no ssh channel to " + m_describe + " in time"));
            close_fd(request.fd);
            return;
        }
        // A session that dropped while idle is noticed here: then connect once more at once.
        for (int attempt = 0; attempt < 2; ++attempt) {
            const bool was_up = up();
            if (!make_ready(request)) {
                close_fd(request.fd);
                return;
            }
            if (request.kind == RequestKind::connect) {
                request.on_ready(Expected<void>());
                return;
            }
            if (claim_spare(request)) return;
            Error error;
            bool broken = false;
            auto* handle = open_channel(request, error, broken);
            if (handle != nullptr) {
                if (m_channels.empty()) m_last_received = Clock::now();
                Channel& channel = m_channels.emplace_back();
                channel.handle = handle;
                channel.fd = std::exchange(request.fd, -1);
                if (request.on_ready) request.on_ready(Expected<void>());
                return;
            }
            if (broken) drop_session(error.message);
            if (!broken || !was_up || attempt == 1 || Clock::now() >= request.deadline) {
                fail(request, error);
                close_fd(request.fd);
                return;
            }
        }
    }

    // Hands a spare channel of the warm command to a request for it.
    bool claim_spare(Request& request)
    {
        if (request.kind != RequestKind::stream || request.command != m_warm) return false;
        for (auto& channel : m_channels) {
            if (!channel.spare || channel.closing || channel.remote_done) continue;
            channel.spare = false;
            channel.fd = std::exchange(request.fd, -1);
            if (request.on_ready) request.on_ready(Expected<void>());
            return true;
        }
        return false;
    }

    // Keeps k_spare_channels channels of the warm command open ahead of need (each replaced after
    // k_spare_age), so a dial costs no channel open; only while the session is up.
    void warm_up()
    {
        if (!up() || m_warm.empty() || Clock::now() < m_warm_retry_at) return;
        std::size_t spares = 0;
        for (auto& channel : m_channels) {
            if (!channel.spare || channel.closing) continue;
            if (Clock::now() - channel.opened > k_spare_age)
                channel.closing = true;
            else
                ++spares;
        }
        for (; spares < k_spare_channels; ++spares) {
            Request request;
            request.kind = RequestKind::stream;
            request.command = m_warm;
            request.deadline = Clock::now() + m_timings.connect_timeout;
            Error error;
            bool broken = false;
            auto* handle = open_channel(request, error, broken);
            if (handle == nullptr) {
                if (broken) drop_session(error.message);
                m_warm_retry_at = Clock::now() + k_spare_retry;
                return;
            }
            if (m_channels.empty()) m_last_received = Clock::now();
            Channel& channel = m_channels.emplace_back();
            channel.handle = handle;
            channel.spare = true;
        }
    }

    // Moves bytes both ways; false when the channel is finished (closed and freed).
    bool pump(Channel& channel, int& session_error)
    {
        char buffer[16384];
        if (channel.closing) return !finish(channel, session_error);
        if (channel.spare) {
            // Nothing is expected from it; reading keeps the session's packets flowing and
            // notices a command that ended (then it is replaced).
            while (channel.from_remote.size() < k_ssh_channel_buffer) {
                const auto got = libssh2_channel_read(channel.handle, buffer, sizeof buffer);
                if (got == LIBSSH2_ERROR_EAGAIN || got == 0) break;
                if (got < 0) return fail_channel(channel, static_cast<int>(got), session_error);
                channel.from_remote.append(buffer, static_cast<std::size_t>(got));
            }
            if (libssh2_channel_eof(channel.handle) != 0) {
                channel.closing = true;
                return !finish(channel, session_error);
            }
            return true;
        }
        // Local end -> channel.
        while (!channel.local_done && channel.to_remote.size() < k_ssh_channel_buffer) {
            const auto got = ::read(channel.fd, buffer, std::min(sizeof buffer, k_ssh_channel_buffer - channel.to_remote.size()));
            if (got > 0) {
                channel.to_remote.append(buffer, static_cast<std::size_t>(got));
                continue;
            }
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) break;
            channel.local_done = true;
        }
        while (!channel.to_remote.empty()) {
            const auto sent = libssh2_channel_write(channel.handle, channel.to_remote.data(), channel.to_remote.size());
            if (sent == LIBSSH2_ERROR_EAGAIN) break;
            if (sent < 0) return fail_channel(channel, static_cast<int>(sent), session_error);
            channel.to_remote.erase(0, static_cast<std::size_t>(sent));
        }
        if (channel.local_done && channel.to_remote.empty() && !channel.eof_sent) {
            const int rc = libssh2_channel_send_eof(channel.handle);
            if (rc == 0) channel.eof_sent = true;
            else if (rc != LIBSSH2_ERROR_EAGAIN) return fail_channel(channel, rc, session_error);
        }
        // Channel -> local end.
        while (!channel.remote_done && channel.from_remote.size() < k_ssh_channel_buffer) {
            const auto got = libssh2_channel_read(channel.handle, buffer,
                                                  std::min(sizeof buffer, k_ssh_channel_buffer - channel.from_remote.size()));
            if (got > 0) {
                channel.from_remote.append(buffer, static_cast<std::size_t>(got));
                continue;
            }
            if (got == LIBSSH2_ERROR_EAGAIN) break;
            if (got < 0) return fail_channel(channel, static_cast<int>(got), session_error);
            if (libssh2_channel_eof(channel.handle) != 0) channel.remote_done = true;
            break;
        }
        if (!channel.remote_done && libssh2_channel_eof(channel.handle) != 0) channel.remote_done = true;
        bool peer_gone = channel.hangup;
        while (!channel.from_remote.empty()) {
            const auto put = ::send(channel.fd, channel.from_remote.data(), channel.from_remote.size(), MSG_NOSIGNAL);
            if (put > 0) {
                channel.from_remote.erase(0, static_cast<std::size_t>(put));
                continue;
            }
            if (put < 0 && (errno == EAGAIN || errno == EINTR)) break;
            peer_gone = true;
            break;
        }
        if (channel.remote_done && channel.from_remote.empty() && !channel.local_shut) {
            ::shutdown(channel.fd, SHUT_WR);
            channel.local_shut = true;
        }
        const bool finished = channel.local_shut && channel.local_done;
        if (peer_gone || finished) {
            channel.closing = true;
            return !finish(channel, session_error);
        }
        return true;
    }

    bool fail_channel(Channel& channel, int rc, int& session_error)
    {
        if (is_session_error(rc)) {
            session_error = rc;
            return true;  // the whole session goes
        }
        close_fd(channel.fd);
        channel.closing = true;
        return !finish(channel, session_error);
    }

    // Closes and frees a closing channel; true when done.
    bool finish(Channel& channel, int& session_error)
    {
        close_fd(channel.fd);
        int rc = libssh2_channel_close(channel.handle);
        if (rc == LIBSSH2_ERROR_EAGAIN) return false;
        if (is_session_error(rc)) {
            session_error = rc;
            return false;
        }
        rc = libssh2_channel_free(channel.handle);
        if (rc == LIBSSH2_ERROR_EAGAIN) return false;
        channel.handle = nullptr;
        return true;
    }

    void run()
    {
        std::vector<pollfd> fds;
        for (;;) {
            std::deque<Request> incoming;
            {
                std::lock_guard lock(m_mutex);
                if (m_stop) break;
                incoming.swap(m_queue);
            }
            for (auto& request : incoming) start(request);
            {
                std::lock_guard lock(m_mutex);
                m_warm = m_warm_command;
            }
            warm_up();

            int session_error = 0;
            for (auto it = m_channels.begin(); it != m_channels.end() && session_error == 0;) {
                if (pump(*it, session_error))
                    ++it;
                else
                    it = m_channels.erase(it);
            }
            int poll_ms = 1000;
            if (up() && session_error == 0) {
                int next_s = 0;
                const int rc = libssh2_keepalive_send(m_link.session, &next_s);
                if (rc != 0 && rc != LIBSSH2_ERROR_EAGAIN) session_error = rc;
                else poll_ms = std::min(poll_ms, std::max(next_s, 1) * 1000);
            }
            if (session_error != 0) {
                drop_session("the connection failed: " + last_ssh_error(m_link.session));
                continue;
            }
            if (up() && !m_channels.empty() &&
                Clock::now() - m_last_received > m_timings.keepalive_interval * m_timings.keepalive_missed) {
                drop_session("the host sent nothing for " +
                             std::to_string((m_timings.keepalive_interval * m_timings.keepalive_missed).count()) + " s");
                continue;
            }

            fds.clear();
            fds.push_back({m_wake_read, POLLIN, 0});
            if (up()) {
                pollfd entry{m_link.socket, 0, 0};
                // Read from the host only when some channel can take what comes; liveness is
                // judged only while reading.
                const bool can_take = std::any_of(m_channels.begin(), m_channels.end(), [](const Channel& channel) {
                    return channel.closing || channel.spare ||
                           (!channel.remote_done && channel.from_remote.size() < k_ssh_channel_buffer);
                });
                if (can_take || (m_channels.empty() && !m_idle_data)) entry.events |= POLLIN;
                if (!can_take) m_last_received = Clock::now();
                if ((libssh2_session_block_directions(m_link.session) & LIBSSH2_SESSION_BLOCK_OUTBOUND) != 0)
                    entry.events |= POLLOUT;
                fds.push_back(entry);
            }
            for (const auto& channel : m_channels) {
                pollfd entry{channel.fd, 0, 0};
                if (channel.fd >= 0 && !channel.local_done && channel.to_remote.size() < k_ssh_channel_buffer)
                    entry.events |= POLLIN;
                if (channel.fd >= 0 && !channel.from_remote.empty()) entry.events |= POLLOUT;
                fds.push_back(entry);
            }
            if (::poll(fds.data(), fds.size(), poll_ms) < 0 && errno != EINTR) break;
            std::size_t index = up() ? 2 : 1;
            for (auto& channel : m_channels) channel.hangup = (fds[index++].revents & (POLLHUP | POLLERR)) != 0;
            if ((fds[0].revents & POLLIN) != 0) {
                char drain[64];
                while (::read(m_wake_read, drain, sizeof drain) > 0) {
                }
            }
            // An idle session: the host may have closed it.
            if (up() && m_channels.empty() && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                char byte;
                const auto got = ::recv(m_link.socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
                if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
                    drop_session("the host closed the connection");
                else
                    m_idle_data = true;
            }
            if (!m_channels.empty()) m_idle_data = false;
        }
        // Stopping: fail what waits, end what runs.
        std::deque<Request> pending;
        {
            std::lock_guard lock(m_mutex);
            pending.swap(m_queue);
        }
        for (auto& request : pending) {
            fail(request, make_error(api_error::k_engine_unreachable, m_describe + ": the ssh session is shutting down"));
            close_fd(request.fd);
        }
        drop_session();
    }

    static constexpr std::size_t k_spare_channels = 1;
    static constexpr auto k_spare_age = std::chrono::seconds(60);
    static constexpr auto k_spare_retry = std::chrono::seconds(5);

    SshEngine m_engine;
    SshTimings m_timings;
    std::string m_describe;
    std::atomic<int> m_connects{0};
    std::atomic<int> m_channels_opened{0};

    mutable std::mutex m_mutex;
    std::deque<Request> m_queue;
    bool m_stop = false;
    std::string m_warm_command;  // set by keep_warm()
    std::optional<std::string> m_last_drop;
    int m_wake_read = -1;
    int m_wake_write = -1;

    // Owned by the session thread.
    detail::SshLink m_link;
    std::list<Channel> m_channels;
    Clock::time_point m_last_received;
    bool m_idle_data = false;  // bytes wait on the idle socket (a keep-alive answer): stop polling it
    int m_failures = 0;
    Clock::time_point m_next_attempt;
    std::optional<Error> m_last_error;
    std::string m_warm;  // the thread's copy of m_warm_command
    Clock::time_point m_warm_retry_at;

    std::thread m_thread;
};

namespace {

// Carries one result from the session thread to a coroutine on `executor`.
template <class T>
struct Handoff {
    explicit Handoff(const net::any_io_executor& executor) : done(executor) { done.expires_at(Clock::time_point::max()); }
    net::steady_timer done;
    std::optional<T> result;

    static std::function<void(T)> deliver(const std::shared_ptr<Handoff>& handoff, net::any_io_executor executor)
    {
        return [handoff, executor](T value) {
            net::post(executor, [handoff, value = std::move(value)]() mutable {
                handoff->result = std::move(value);
                handoff->done.cancel();
            });
        };
    }
};

}  // namespace

SshSession::SshSession(SshEngine engine, SshTimings timings)
    : m_impl(std::make_shared<Impl>(std::move(engine), timings))
{
}

SshSession::~SshSession() = default;

std::string SshSession::describe() const { return m_impl->describe(); }

const SshEngine& SshSession::engine() const { return m_impl->engine(); }

std::optional<std::string> SshSession::last_drop() const { return m_impl->last_drop(); }

void SshSession::keep_warm(std::string command) { m_impl->keep_warm(std::move(command)); }

int SshSession::connects() const { return m_impl->connects(); }

int SshSession::channels_opened() const { return m_impl->channels_opened(); }

net::awaitable<Expected<void>> SshSession::ready(net::any_io_executor executor, milliseconds timeout)
{
    auto handoff = std::make_shared<Handoff<Expected<void>>>(executor);
    Request request;
    request.kind = RequestKind::connect;
    request.deadline = Clock::now() + timeout;
    request.on_ready = Handoff<Expected<void>>::deliver(handoff, executor);
    m_impl->submit(std::move(request));
    co_await handoff->done.async_wait(net::as_tuple(net::use_awaitable));
    if (!handoff->result) co_return make_error(api_error::k_engine_timeout, "connecting to " + describe() + " was cancelled");
    co_return std::move(*handoff->result);
}

namespace {

// The far end is pumped by the session thread's poll(): non-blocking.
Expected<std::pair<Stream, int>> make_socket_pair(const net::any_io_executor& executor, const std::string& describe)
{
    auto pair = make_stream_pair(executor, describe);
    if (pair) ::fcntl(pair->second, F_SETFL, ::fcntl(pair->second, F_GETFL) | O_NONBLOCK);
    return pair;
}

}  // namespace

net::awaitable<Expected<Stream>> SshSession::open_stream(net::any_io_executor executor, std::string command,
                                                        milliseconds timeout)
{
    auto pair = make_socket_pair(executor, describe());
    if (!pair) co_return pair.error();
    auto handoff = std::make_shared<Handoff<Expected<void>>>(executor);
    Request request;
    request.kind = RequestKind::stream;
    request.command = std::move(command);
    request.fd = pair->second;
    request.deadline = Clock::now() + timeout;
    request.on_ready = Handoff<Expected<void>>::deliver(handoff, executor);
    m_impl->submit(std::move(request));
    co_await handoff->done.async_wait(net::as_tuple(net::use_awaitable));
    if (!handoff->result) co_return make_error(api_error::k_engine_timeout, "opening a channel to " + describe() + " was cancelled");
    if (!*handoff->result) co_return handoff->result->error();
    co_return std::move(pair->first);
}

Expected<Stream> SshSession::start_stream(const net::any_io_executor& executor, std::string command,
                                          milliseconds timeout)
{
    auto pair = make_socket_pair(executor, describe());
    if (!pair) return pair.error();
    Request request;
    request.kind = RequestKind::stream;
    request.command = std::move(command);
    request.fd = pair->second;
    request.deadline = Clock::now() + timeout;
    m_impl->submit(std::move(request));
    return std::move(pair->first);
}

}  // namespace pybox::engine
