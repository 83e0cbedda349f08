// The `pyboxd` command line as one CLI::App: daemon/main.cpp parses with it, and the man page
// generator (packaging/docgen) walks it, so pyboxd(8) says what `pyboxd --help` says.
#pragma once

#include <CLI/CLI.hpp>

namespace pybox::daemon {

// What the options chose.
struct DaemonOptions {
    bool system = false;  // --system: root's daemon for the pybox group (docs/install.md)
};

// Names the App "pyboxd" and declares its description and options, which fill `options`.
void configure_daemon_cli(CLI::App& app, DaemonOptions& options);


}  // namespace pybox::daemon
