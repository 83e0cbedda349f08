#include "daemon/engine/ssh_dialer.hpp"

#include "daemon/engine/ssh_rules.hpp"

namespace pybox::engine {

namespace {

class SshDialer final : public EngineDialer {
public:
    SshDialer(net::any_io_executor executor, std::shared_ptr<SshSession> session)
        : m_executor(std::move(executor)),
          m_session(std::move(session)),
          m_command(engine_stream_command(m_session->engine().engine_socket.string()))
    {
        m_session->keep_warm(m_command);
    }

    net::awaitable<Expected<Stream>> dial(Timeout timeout) override
    {
        return m_session->open_stream(m_executor, m_command, timeout);
    }

    // A dial is an exec channel (a few ms); a request on a kept one a fraction of a ms.
    bool keeps_connections() const override { return true; }

    std::string describe() const override
    {
        return m_session->describe() + " (engine socket " + m_session->engine().engine_socket.string() + ")";
    }

private:
    net::any_io_executor m_executor;
    std::shared_ptr<SshSession> m_session;
    std::string m_command;
};

}  // namespace

std::unique_ptr<EngineDialer> make_ssh_dialer(net::any_io_executor executor, std::shared_ptr<SshSession> session)
{
    return std::make_unique<SshDialer>(std::move(executor), std::move(session));
}

}  // namespace pybox::engine
