#include "tests/hostile/raw_client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <thread>

namespace pybox::test {

namespace net = boost::asio;
using Local = net::local::stream_protocol;

RawReply raw_exchange(const std::filesystem::path& socket, const std::string& request, std::chrono::milliseconds limit)
{
    net::io_context io;
    Local::socket stream(io);
    RawReply reply;
    const auto started = std::chrono::steady_clock::now();
    stream.connect(Local::endpoint(socket.string()));

    net::steady_timer timer(io, limit);
    timer.async_wait([&](boost::system::error_code ec) {
        if (!ec) stream.cancel();
    });
    net::async_write(stream, net::buffer(request), [&](boost::system::error_code ec, std::size_t) {
        if (ec) reply.write_failed = true;
    });
    std::array<char, 64 * 1024> chunk{};
    std::function<void(boost::system::error_code, std::size_t)> on_read = [&](boost::system::error_code ec,
                                                                                  std::size_t got) {
        reply.bytes.append(chunk.data(), got);
        if (!ec) {
            stream.async_read_some(net::buffer(chunk), on_read);
            return;
        }
        reply.closed_by_server = ec == net::error::eof || ec == net::error::connection_reset;
        reply.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
        timer.cancel();
        boost::system::error_code ignored;
        stream.close(ignored);
    };
    stream.async_read_some(net::buffer(chunk), on_read);
    io.run();
    return reply;
}

RawReply raw_exchange_as(unsigned uid, unsigned gid, const std::filesystem::path& socket, const std::string& request,
                         std::chrono::milliseconds limit)
{
    // The child's exit status says how far it got; its stdout-like pipe carries the reply:
    // one byte closed_by_server, one byte write_failed, then the bytes received.
    enum ChildExit { k_ok = 0, k_identity = 2, k_connect = 3 };
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const auto started = std::chrono::steady_clock::now();
    const pid_t child = ::fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
        ::close(pipe_fds[0]);
        if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(k_identity);
        RawReply reply;
        try {
            reply = raw_exchange(socket, request, limit);
        } catch (const std::exception&) {
            ::_exit(k_connect);
        }
        std::string out{reply.closed_by_server ? '1' : '0', reply.write_failed ? '1' : '0'};
        out += reply.bytes;
        for (std::size_t sent = 0; sent < out.size();) {
            const auto put = ::write(pipe_fds[1], out.data() + sent, out.size() - sent);
            if (put <= 0) ::_exit(1);
            sent += static_cast<std::size_t>(put);
        }
        ::_exit(k_ok);
    }
    ::close(pipe_fds[1]);
    std::string out;
    std::array<char, 64 * 1024> chunk{};
    for (ssize_t got; (got = ::read(pipe_fds[0], chunk.data(), chunk.size())) != 0;) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) break;
        out.append(chunk.data(), static_cast<std::size_t>(got));
    }
    ::close(pipe_fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == k_identity) throw std::runtime_error("the child could not switch to uid " + std::to_string(uid));
    if (code == k_connect) throw std::runtime_error("the child running as uid " + std::to_string(uid) + " could not connect to " + socket.string());
    if (code != k_ok || out.size() < 2) throw std::runtime_error("the child client failed (status " + std::to_string(status) + ")");
    RawReply reply;
    reply.closed_by_server = out[0] == '1';
    reply.write_failed = out[1] == '1';
    reply.bytes = out.substr(2);
    reply.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    return reply;
}

std::vector<HttpAnswer> split_answers(const std::string& bytes)
{
    std::vector<HttpAnswer> answers;
    std::size_t at = 0;
    for (;;) {
        const auto head_end = bytes.find("\r\n\r\n", at);
        if (head_end == std::string::npos) break;
        HttpAnswer answer;
        answer.head = bytes.substr(at, head_end - at);
        if (answer.head.rfind("HTTP/1.1 ", 0) != 0) break;
        answer.status = std::atoi(answer.head.c_str() + 9);
        std::size_t length = 0;
        std::string lower;
        for (char c : answer.head) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        if (const auto field = lower.find("\r\ncontent-length:"); field != std::string::npos)
            length = std::strtoull(lower.c_str() + field + 17, nullptr, 10);
        const auto body_at = head_end + 4;
        if (bytes.size() - body_at < length) break;
        answer.body = bytes.substr(body_at, length);
        answers.push_back(std::move(answer));
        at = body_at + length;
    }
    return answers;
}

namespace {

// One slow client: writes the next header byte at every tick, notices the server's close.
struct Trickler {
    Trickler(net::io_context& io, const std::filesystem::path& socket) : stream(io), ticker(io)
    {
        stream.connect(Local::endpoint(socket.string()));
        connected_at = std::chrono::steady_clock::now();
    }

    void start(std::chrono::milliseconds interval)
    {
        stream.async_read_some(net::buffer(sink), [this](boost::system::error_code, std::size_t) { closed(); });
        tick(interval);
    }

    void tick(std::chrono::milliseconds interval)
    {
        ticker.expires_after(interval);
        ticker.async_wait([this, interval](boost::system::error_code ec) {
            if (ec || closed_after) return;
            pending = sent < header.size() ? header[sent] : 'a';
            ++sent;
            net::async_write(stream, net::buffer(&pending, 1), [this, interval](boost::system::error_code write_ec, std::size_t) {
                if (write_ec) return closed();
                tick(interval);
            });
        });
    }

    void closed()
    {
        if (closed_after) return;
        closed_after = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - connected_at);
        ticker.cancel();
    }

    Local::socket stream;
    net::steady_timer ticker;
    std::chrono::steady_clock::time_point connected_at;
    std::optional<std::chrono::milliseconds> closed_after;
    std::array<char, 4096> sink{};
    std::size_t sent = 0;
    char pending = 0;
    // A header that never ends: after this, the value goes on with 'a' for ever.
    const std::string header = "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\nX-Slow: ";
};

}  // namespace

std::vector<std::optional<std::chrono::milliseconds>> trickle_headers(const std::filesystem::path& socket,
                                                                      std::size_t count,
                                                                      std::chrono::milliseconds interval,
                                                                      std::chrono::milliseconds limit)
{
    net::io_context io;
    std::vector<std::unique_ptr<Trickler>> clients;
    for (std::size_t i = 0; i < count; ++i) clients.push_back(std::make_unique<Trickler>(io, socket));
    for (auto& client : clients) client->start(interval);
    io.run_for(limit);
    std::vector<std::optional<std::chrono::milliseconds>> closed;
    for (auto& client : clients) closed.push_back(client->closed_after);
    return closed;
}

struct IdleConnections::Impl {
    net::io_context io;
    std::vector<std::unique_ptr<Local::socket>> sockets;
    std::array<char, 4096> sink{};  // what a refused connection is answered: not kept
    std::atomic<std::size_t> closed{0};
    std::thread runner;
};

IdleConnections::IdleConnections(const std::filesystem::path& socket, std::size_t count)
    : m_impl(std::make_unique<Impl>())
{
    for (std::size_t i = 0; i < count; ++i) {
        auto connection = std::make_unique<Local::socket>(m_impl->io);
        connection->connect(Local::endpoint(socket.string()));
        connection->async_read_some(net::buffer(m_impl->sink),
                                    [impl = m_impl.get()](boost::system::error_code, std::size_t) { ++impl->closed; });
        m_impl->sockets.push_back(std::move(connection));
    }
    m_impl->runner = std::thread([impl = m_impl.get()] { impl->io.run(); });
}

IdleConnections::~IdleConnections()
{
    m_impl->io.stop();
    m_impl->runner.join();
}

std::size_t IdleConnections::closed_by_server() const { return m_impl->closed.load(); }

struct AbstractListener::Impl {
    net::io_context io;
    Local::acceptor acceptor{io};
    Local::endpoint endpoint;
};

AbstractListener::AbstractListener(const std::string& name) : m_impl(std::make_unique<Impl>())
{
    m_impl->endpoint = Local::endpoint(std::string(1, '\0') + name);
    m_impl->acceptor.open(m_impl->endpoint.protocol());
    m_impl->acceptor.bind(m_impl->endpoint);
    m_impl->acceptor.listen();
}

AbstractListener::~AbstractListener() = default;

bool AbstractListener::reachable_from_host() const
{
    Local::socket probe(m_impl->io);
    boost::system::error_code ec;
    probe.connect(m_impl->endpoint, ec);
    return !ec;
}

}  // namespace pybox::test
