#include "daemon/daemon_cli.hpp"

#include "common/paths.hpp"
#include "common/version.hpp"

namespace pybox::daemon {

void configure_daemon_cli(CLI::App& app, DaemonOptions& options)
{
    app.name("pyboxd");
    app.description("pyboxd: the PyBox daemon. Serves the pybox client and scripts on\n"
                    "<runtime>/pyboxd.sock (HTTP + JSON, see docs/api.md) and runs each program in a\n"
                    "fresh sealed box. The runtime folder is $PYBOX_HOME, else ~/.pybox/runtime.\n"
                    "Runs in the foreground; stop it with SIGTERM or Ctrl-C. Started by a service\n"
                    "manager's socket (systemd's pyboxd.socket: LISTEN_FDS=1, LISTEN_PID), it serves\n"
                    "that socket instead and leaves its file to the service manager (docs/install.md).");
    app.set_version_flag("--version", "pyboxd " + pybox::version());
    app.add_flag("--system", options.system,
                 std::string("Run as root's system daemon for the members of the pybox group: the socket is ") +
                     pybox::k_system_socket + " (or $PYBOX_SYSTEM_SOCKET), mode 0660, group pybox; the runtime folder " +
                     pybox::k_system_runtime + " (or $PYBOX_HOME). Each user's runs carry their uid; only root manages "
                     "the engine and images.");
}

}  // namespace pybox::daemon
