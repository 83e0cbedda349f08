// pybox: the thin client of pyboxd. Wires the subcommand table into CLI11; nothing else.
#include "client/commands.hpp"

#include <CLI/CLI.hpp>

#include <csignal>
#include <iterator>

namespace {

using pybox::client::Command;

constexpr Command k_commands[] = {
    {"exec", "Run a Python program in a fresh sealed box and print its output and a receipt",
     pybox::client::configure_exec},
    {"vm", "Start, stop or check the private container engine", pybox::client::configure_vm},
    {"setup", "Build the images (or confirm they are up to date)", pybox::client::configure_setup},
    {"image", "List the built images", pybox::client::configure_image},
    {"attempts", "List the runs whose end pyboxd did not confirm (it was killed or lost the engine mid-run)",
     pybox::client::configure_attempts},
    {"mcp", "Serve AI agents over the Model Context Protocol on stdin/stdout (docs/mcp.md)",
     pybox::client::configure_mcp},
    {"doctor", "Check everything a run depends on; say what is wrong and how to fix it", pybox::client::configure_doctor},
    {"version", "Print the version", pybox::client::configure_version},
};

}  // namespace

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);  // a closed stdout or socket is an error to report, not a crash

    CLI::App app{"pybox: run Python programs in fresh, locked-down containers and get a receipt."};
    app.require_subcommand(1);
    // `pybox --version` is `pybox version`; its exit code travels in a RuntimeError, which
    // CLI11 throws before it checks for the subcommand and prints nothing for.
    app.add_flag_callback(
        "--version", [version = pybox::client::configure_version(app)] { throw CLI::RuntimeError(version()); },
        "Print the client's and the daemon's versions (as `pybox version`)");
    pybox::client::Action actions[std::size(k_commands)];
    CLI::App* commands[std::size(k_commands)];
    for (std::size_t i = 0; i < std::size(k_commands); ++i) {
        commands[i] = app.add_subcommand(std::string(k_commands[i].name), std::string(k_commands[i].description));
        actions[i] = k_commands[i].configure(*commands[i]);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int code = app.exit(error);
        return code == 0 ? 0 : pybox::client::k_exit_pybox_failed;
    }
    for (std::size_t i = 0; i < std::size(k_commands); ++i)
        if (commands[i]->parsed()) return actions[i]();
    return pybox::client::k_exit_pybox_failed;
}
