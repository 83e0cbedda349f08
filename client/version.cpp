// `pybox version` and `pybox --version`: the client's version, then the daemon's (like
// `docker version`, it exits non-zero when the daemon does not answer, so scripts can use it as
// a liveness check; the client's version is printed either way).
#include "client/commands.hpp"
#include "common/version.hpp"
#include "proto/api.hpp"

#include <CLI/CLI.hpp>

#include <chrono>

namespace pybox::client {

std::string render_client_version()
{
    return "pybox " + pybox::version() + " (API " + std::string(proto::k_api_version) + ")\n";
}

Rendered render_daemon_version(const Expected<proto::PingAnswer>& ping)
{
    if (!ping) return {"pybox: the daemon's version is unknown: " + ping.error().message + "\n", k_exit_pybox_failed};
    return {"pyboxd " + ping->version + " (API " + ping->api + ")\n", 0};
}

Action configure_version(CLI::App&)
{
    return [] {
        write_bytes(stdout, render_client_version());
        auto connection = DaemonConnection::from_environment();
        if (!connection) return print(render_daemon_version(connection.error()));
        return print(render_daemon_version(
            read_answer(connection->call("GET", "/v1/ping", "", k_ping_timeout), &proto::ping_answer_from_json)));
    };
}

}  // namespace pybox::client
