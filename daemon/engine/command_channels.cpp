#include "daemon/engine/command_channels.hpp"

#include "common/api_error_codes.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pybox::engine {

Expected<std::pair<CommandChannels::Stream, int>> make_stream_pair(const net::any_io_executor& executor,
                                                                  const std::string& describe)
{
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
        return make_error(api_error::k_engine_unreachable, "cannot make a socketpair for " + describe + ": " + std::strerror(errno));
    CommandChannels::Stream local(executor);
    boost::system::error_code ec;
    local.assign(net::local::stream_protocol(), ends[0], ec);
    if (ec) {
        ::close(ends[0]);
        ::close(ends[1]);
        return make_error(api_error::k_engine_unreachable, "cannot use a socketpair for " + describe + ": " + ec.message());
    }
    return std::pair<CommandChannels::Stream, int>(std::move(local), ends[1]);
}

}  // namespace pybox::engine
