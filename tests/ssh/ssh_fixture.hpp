// What the ssh tests share: the fixture's files (ssh_up.sh writes $PYBOX_SSH_DIR/ssh.env), the
// tiny image they import into engine2, and a way to run one coroutine to its end.
#pragma once

#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "tests/support/build_paths.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace pybox::test {

inline constexpr std::string_view k_tiny_image = "pybox-ssh-tiny:1";
// How long a test waits for one Engine API call over ssh.
inline constexpr engine::Timeout k_call{10'000};

class Fixture {
public:
    Fixture()
    {
        const char* dir = std::getenv("PYBOX_SSH_DIR");
        const char* engine2 = std::getenv("PYBOX_ENGINE2_DIR");
        REQUIRE(dir != nullptr);
        REQUIRE(engine2 != nullptr);
        m_dir = dir;
        m_engine2 = engine2;
        std::ifstream env(m_dir + "/ssh.env");
        REQUIRE(env.good());
        std::string line;
        while (std::getline(env, line))
            if (auto eq = line.find('='); eq != std::string::npos) m_values[line.substr(0, eq)] = line.substr(eq + 1);
    }

    const std::string& dir() const { return m_dir; }
    const std::string& engine2_dir() const { return m_engine2; }
    std::string value(const std::string& key) const
    {
        auto it = m_values.find(key);
        REQUIRE(it != m_values.end());
        return it->second;
    }
    std::string port() const { return value("PORT"); }

    // The engine as config.json would name it, with the host key pinned by fingerprint.
    engine::SshEngine engine() const
    {
        engine::SshEngine engine;
        engine.address = {value("USER"), "127.0.0.1", static_cast<std::uint16_t>(std::stoi(port()))};
        engine.engine_socket = value("ENGINE_SOCKET");
        engine.identity_file = value("USER_KEY");
        engine.host_key_sha256 = value("HOST_KEY");
        return engine;
    }

    std::string sshd_log() const
    {
        std::ifstream log(value("SSHD_LOG"));
        std::stringstream text;
        text << log.rdbuf();
        return text.str();
    }

    void kill_sshd() const { REQUIRE(std::system((script("ssh_down.sh") + " --kill").c_str()) == 0); }
    // SIGSTOP or SIGCONT to the fixture's sshd and its sessions.
    void signal_sshd(const std::string& signal) const
    {
        REQUIRE(std::system((script("ssh_down.sh") + " --signal " + signal).c_str()) == 0);
    }
    void restart_sshd() const { REQUIRE(std::system((script("ssh_up.sh") + " --restart").c_str()) == 0); }

private:
    static std::string script(const std::string& name) { return pybox::test::source_dir().string() + "/tests/integration/" + name; }

    std::string m_dir;
    std::string m_engine2;
    std::map<std::string, std::string> m_values;
};

// Runs one coroutine on `io` to its end; a failed REQUIRE inside is rethrown here.
template <class Make>
void run(boost::asio::io_context& io, Make make)
{
    auto done = boost::asio::co_spawn(io, make(), boost::asio::use_future);
    io.restart();
    io.run();
    done.get();
}

// Imports the fixture's tiny image (dash and its libraries) unless engine2 has it.
inline boost::asio::awaitable<void> load_tiny_image(engine::EngineClient& client, const Fixture& fixture)
{
    const engine::Timeout timeout{60'000};
    auto found = co_await client.inspect_image(k_tiny_image, timeout);
    if (found.has_value()) co_return;
    auto imported = co_await client.import_image(fixture.value("TINY_ROOTFS"), "pybox-ssh-tiny", "1", timeout);
    REQUIRE(imported.has_value());
}

}  // namespace pybox::test
