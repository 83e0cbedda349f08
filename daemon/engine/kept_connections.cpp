#include "daemon/engine/kept_connections.hpp"

namespace pybox::engine {

namespace {

// An idle connection is usable when nothing can be read from it yet: end of stream means the
// engine closed it, and bytes nobody asked for mean it is out of step.
bool still_idle(KeptConnections::Stream& stream)
{
    boost::system::error_code ec;
    stream.non_blocking(true, ec);
    if (ec) return false;
    char byte = 0;
    stream.receive(boost::asio::buffer(&byte, 1), boost::asio::socket_base::message_peek, ec);
    const bool idle = ec == boost::asio::error::would_block;
    stream.non_blocking(false, ec);
    return idle && !ec;
}

}  // namespace

std::optional<KeptConnections::Stream> KeptConnections::take()
{
    while (!m_idle.empty()) {
        Idle idle = std::move(m_idle.back());  // the most recently used first
        m_idle.pop_back();
        if (Clock::now() - idle.since < k_kept_idle && still_idle(idle.stream)) return std::move(idle.stream);
    }
    return std::nullopt;
}

void KeptConnections::keep(Stream stream)
{
    m_idle.push_back(Idle{std::move(stream), Clock::now()});
    while (m_idle.size() > k_kept_connections) m_idle.pop_front();
}

void KeptConnections::clear() { m_idle.clear(); }

}  // namespace pybox::engine
