#include "client/cli.hpp"

#include <iterator>

namespace pybox::client {

namespace {

constexpr Command k_commands[] = {
    {"exec", "Run a Python program in a fresh sealed box and print its output and a receipt", configure_exec},
    {"repair", "Run a program and, while it fails, let the configured model correct it (docs/repair.md)",
     configure_repair},
    {"vm", "Start, stop or check the private container engine", configure_vm},
    {"setup", "Build the images (or confirm they are up to date)", configure_setup},
    {"image", "List the built images", configure_image},
    {"attempts", "List the runs whose end pyboxd did not confirm (it was killed or lost the engine mid-run)",
     configure_attempts},
    {"receipts", "List the receipts pyboxd keeps, or show one (receipts show ID)", configure_receipts},
    {"verify", "Check a receipt's signature offline: unchanged, and signed by a trusted installation",
     configure_verify},
    {"key", "Show this installation's public key, which verifies its receipts (key show)", configure_key},
    {"mcp", "Serve AI agents over the Model Context Protocol on stdin/stdout (docs/mcp.md)", configure_mcp},
    {"doctor", "Check everything a run depends on; say what is wrong and how to fix it", configure_doctor},
    {"version", "Print the version", configure_version},
};

}  // namespace

std::unique_ptr<Cli> make_cli()
{
    auto cli = std::make_unique<Cli>();
    CLI::App& app = cli->app;
    app.require_subcommand(1);
    // `pybox --version` is `pybox version`; its exit code travels in a RuntimeError, which
    // CLI11 throws before it checks for the subcommand and prints nothing for.
    app.add_flag_callback(
        "--version", [version = configure_version(app)] { throw CLI::RuntimeError(version()); },
        "Print the client's and the daemon's versions (as `pybox version`)");
    for (const auto& command : k_commands) {
        auto* sub = app.add_subcommand(std::string(command.name), std::string(command.description));
        cli->commands.emplace_back(sub, command.configure(*sub));
    }
    return cli;
}

int run_cli(Cli& cli, int argc, char** argv)
{
    try {
        cli.app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int code = cli.app.exit(error);
        return code == 0 ? 0 : k_exit_pybox_failed;
    }
    for (const auto& [command, action] : cli.commands)
        if (command->parsed()) return action();
    return k_exit_pybox_failed;
}

}  // namespace pybox::client
