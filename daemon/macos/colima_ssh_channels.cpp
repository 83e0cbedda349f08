#include "daemon/macos/colima_ssh_channels.hpp"

#include "common/api_error_codes.hpp"
#include "common/process.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace pybox::macos {

namespace {

constexpr auto k_use = net::as_tuple(net::use_awaitable);
using Pipe = net::posix::stream_descriptor;

// The daemon's side of one `colima ssh` process: the far end of the caller's stream, and the
// child's stdin and stdout pipes. The child gets two pipes, not the socket itself: a socket as
// both stdin and stdout stays open for as long as anything in the chain still reads stdin (the
// watcher's relay does, to the end), so the end of the command's output would never show.
struct Pump {
    Pump(engine::CommandChannels::Stream far_end, Pipe to_stdin, Pipe from_stdout)
        : far(std::move(far_end)), to_child(std::move(to_stdin)), from_child(std::move(from_stdout))
    {
    }
    engine::CommandChannels::Stream far;
    Pipe to_child;
    Pipe from_child;
};

// Copies `from` to `to` until `from` ends or either fails.
template <class From, class To>
net::awaitable<void> copy_until_end(From& from, To& to)
{
    std::array<char, 16 * 1024> buffer;
    for (;;) {
        auto [read_error, got] = co_await from.async_read_some(net::buffer(buffer), k_use);
        if (got > 0) {
            auto [write_error, written] = co_await net::async_write(to, net::buffer(buffer.data(), got), k_use);
            if (write_error) co_return;
        }
        if (read_error) co_return;
    }
}

// What the caller writes goes to the child's stdin; the caller's half-close closes it.
net::awaitable<void> pump_to_child(std::shared_ptr<Pump> pump)
{
    co_await copy_until_end(pump->far, pump->to_child);
    boost::system::error_code ignored;
    pump->to_child.close(ignored);
}

// The child's stdout goes to the caller; its end half-closes the caller's stream.
net::awaitable<void> pump_from_child(std::shared_ptr<Pump> pump)
{
    co_await copy_until_end(pump->from_child, pump->far);
    boost::system::error_code ignored;
    pump->from_child.close(ignored);
    pump->far.shutdown(engine::CommandChannels::Stream::shutdown_send, ignored);
}

Error pipe_error(const std::string& describe)
{
    return make_error(api_error::k_engine_unreachable, "cannot make a pipe for " + describe + ": " + std::strerror(errno));
}

}  // namespace

ColimaSshChannels::ColimaSshChannels(ColimaLayout layout, std::filesystem::path colima)
    : m_layout(std::move(layout)), m_colima(std::move(colima))
{
}

std::string ColimaSshChannels::describe() const { return "the colima VM through `" + m_colima.string() + " ssh`"; }

net::awaitable<Expected<engine::CommandChannels::Stream>> ColimaSshChannels::open_stream(
    net::any_io_executor executor, std::string command, std::chrono::milliseconds timeout)
{
    co_return start_stream(executor, std::move(command), timeout);
}

Expected<engine::CommandChannels::Stream> ColimaSshChannels::start_stream(const net::any_io_executor& executor,
                                                                          std::string command,
                                                                          std::chrono::milliseconds)
{
    auto pair = engine::make_stream_pair(executor, describe());
    if (!pair) return pair.error();
    engine::CommandChannels::Stream far(executor, net::local::stream_protocol(), pair->second);
    int stdin_pipe[2];
    int stdout_pipe[2];
    if (::pipe2(stdin_pipe, O_CLOEXEC) != 0) return pipe_error(describe());
    if (::pipe2(stdout_pipe, O_CLOEXEC) != 0) {
        ::close(stdin_pipe[0]);
        ::close(stdin_pipe[1]);
        return pipe_error(describe());
    }
    const std::vector<std::string> in_vm{"sh", "-c", std::move(command)};
    auto started = spawn_detached_on_pipes(colima_ssh_argv(m_colima, in_vm), stdin_pipe[0], stdout_pipe[1],
                                           colima_environment(m_layout, m_colima));
    ::close(stdin_pipe[0]);
    ::close(stdout_pipe[1]);
    auto pump = std::make_shared<Pump>(std::move(far), Pipe(executor, stdin_pipe[1]), Pipe(executor, stdout_pipe[0]));
    if (!started) return started.error();  // the pump, unstarted, closes every end
    net::co_spawn(executor, pump_to_child(pump), net::detached);
    net::co_spawn(executor, pump_from_child(std::move(pump)), net::detached);
    return std::move(pair->first);
}

}  // namespace pybox::macos
