// `pybox version`: the client's version, then the daemon's (like `docker version`, it exits
// non-zero when the daemon does not answer, so scripts can use it as a liveness check).
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"
#include "proto/api.hpp"

#include <CLI/CLI.hpp>

#include <chrono>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_ping_timeout{5};

}  // namespace

Action configure_version(CLI::App&)
{
    return [] {
        write_bytes(stdout, "pybox " PYBOX_VERSION " (API " + std::string(proto::k_api_version) + ")\n");
        auto connection = DaemonConnection::from_environment();
        if (!connection) return fail(connection.error());
        auto answer = connection->call("GET", "/v1/ping", "", k_ping_timeout);
        if (!answer) return fail(answer.error());
        return print({"pyboxd " + json_text(*answer, "version") + " (API " + json_text(*answer, "api") + ")\n", 0});
    };
}

}  // namespace pybox::client
