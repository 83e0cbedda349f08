// ColimaSshChannels: the fallback way into the colima VM for the kernel watcher (the seed's
// "checked direct ssh, or colima ssh as a fallback"). Each command is a process
// `colima ssh --profile pybox -- sh -c <command>` (colima_ssh_argv, with colima_environment),
// its stdin and stdout pipes that the daemon pumps to and from the far end of the caller's
// socketpair (on the executor), its stderr dropped. colima reaches the VM with
// Lima's own ssh settings, which do not check the VM's host key: that is why it is only the
// fallback, used when the direct libssh2 session (checked against the pinned key) cannot be made.
//
// The process is detached (spawn_detached_on_pipes: never this daemon's zombie) and ends when
// its command ends, or when the caller closes its end of the stream. `command` is one of PyBox's
// fixed scripts (daemon/watcher/ssh_cgroup_host.hpp), never text from a request.
// Executor: start_stream() and open_stream() start the process at once and never wait.
#pragma once

#include "daemon/engine/command_channels.hpp"
#include "daemon/macos/colima_profile.hpp"

#include <filesystem>

namespace pybox::macos {

namespace net = boost::asio;

class ColimaSshChannels final : public engine::CommandChannels {
public:
    ColimaSshChannels(ColimaLayout layout, std::filesystem::path colima);

    std::string describe() const override;
    net::awaitable<Expected<Stream>> open_stream(net::any_io_executor executor, std::string command,
                                                 std::chrono::milliseconds timeout) override;
    Expected<Stream> start_stream(const net::any_io_executor& executor, std::string command,
                                  std::chrono::milliseconds timeout) override;
    std::optional<std::string> last_drop() const override { return std::nullopt; }

private:
    ColimaLayout m_layout;
    std::filesystem::path m_colima;
};

}  // namespace pybox::macos
