// The whole `pybox` command line: the subcommand table wired into one CLI::App. main.cpp parses
// with it and runs the chosen action; the generators of the completion scripts and the man page
// (packaging/docgen) and their tests walk the same App, so neither can drift from `--help`.
#pragma once

#include "client/commands.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <utility>
#include <vector>

namespace pybox::client {

struct Cli {
    CLI::App app{"pybox: run Python programs in fresh, locked-down containers and get a receipt.", "pybox"};
    // Each subcommand of the table with the action its configure_* returned.
    std::vector<std::pair<CLI::App*, Action>> commands;
};

// A CLI::App cannot move, so the Cli lives on the heap.
std::unique_ptr<Cli> make_cli();

// Parses argv and runs the chosen subcommand's action; returns the process exit code.
int run_cli(Cli& cli, int argc, char** argv);

}  // namespace pybox::client
