// CommandChannels: shell commands run on another machine, each behind one local stream socket
// (bytes written go to the command's stdin, its stdout comes back, its stderr is dropped;
// half-closing this end sends EOF to the command, the command's end of output half-closes it).
// What the watcher of another host needs (daemon/watcher/ssh_cgroup_host.hpp). Two kinds:
// SshSession (an exec channel of the daemon's held libssh2 session) and, on macOS,
// macos::ColimaSshChannels (a `colima ssh` process per command, the fallback into the VM).
//
// Executor: open_stream() completes through the executor given and never blocks it;
// start_stream() returns at once (a command that cannot be started leaves the socket at its end
// with nothing read).
#pragma once

#include "common/error.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>

namespace pybox::engine {

namespace net = boost::asio;

class CommandChannels {
public:
    using Stream = net::local::stream_protocol::socket;

    virtual ~CommandChannels() = default;

    // Where the commands run, for messages (e.g. "ssh://user@host:port").
    virtual std::string describe() const = 0;

    // Runs `command` (one shell command line: build it with shell_command) and returns this end
    // of its stream once the command is started, within `timeout`.
    virtual net::awaitable<Expected<Stream>> open_stream(net::any_io_executor executor, std::string command,
                                                         std::chrono::milliseconds timeout) = 0;

    // The same without waiting (see above).
    virtual Expected<Stream> start_stream(const net::any_io_executor& executor, std::string command,
                                          std::chrono::milliseconds timeout) = 0;

    // Why the way to that machine was last lost, if it ever was (for messages).
    virtual std::optional<std::string> last_drop() const = 0;
};

// A connected pair of stream sockets: this end on `executor`, and the far end's file
// descriptor (close-on-exec, blocking) for whatever carries the command. Fails with
// "engine_unreachable" naming `describe`.
Expected<std::pair<CommandChannels::Stream, int>> make_stream_pair(const net::any_io_executor& executor,
                                                                  const std::string& describe);

}  // namespace pybox::engine
