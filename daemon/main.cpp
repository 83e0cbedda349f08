// pyboxd: the per-user PyBox daemon. Parses options, builds the Daemon (daemon_wiring.hpp) and
// runs it; nothing else.
#include "daemon/daemon_cli.hpp"
#include "daemon/daemon_wiring.hpp"
#include "daemon/server/socket_activation.hpp"

#include <CLI/CLI.hpp>

using namespace pybox;

int main(int argc, char** argv)
{
    CLI::App app;
    daemon::DaemonOptions options;
    daemon::configure_daemon_cli(app, options);
    CLI11_PARSE(app, argc, argv);
    // First, while no thread exists: LISTEN_* leave the environment here, before any child.
    auto activated = daemon::adopt_activated_socket();
    if (!activated) daemon::fail_to_start(activated.error());

    daemon::Daemon pyboxd(options, std::move(*activated));
    return pyboxd.run();
}
