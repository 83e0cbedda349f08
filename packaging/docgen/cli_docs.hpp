// Shell completion scripts (bash, zsh, fish) and man pages generated from a CLI::App, so that
// what a shell completes and what `man` says are what `--help` says: every visible subcommand
// (nested too), every option and flag, with the descriptions CLI11 holds. Hidden subcommands
// and options (empty group) are left out.
//
// What an option's value completes to comes from its type name: FILE and PATH complete file
// names, DIR folder names, IMAGE the names `pybox image ls` prints; anything else nothing. A
// positional of one of those types completes the same way in place of a subcommand.
//
// Pure: the App is only read; nothing is parsed, printed or executed here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace pybox::docgen {

// The script each shell sources; each defines one function named "_" + app name (fish: the
// helpers "__<name>_path" and "__<name>_path_is") and registers it for the app's name.
std::string bash_completion(const CLI::App& app);
std::string zsh_completion(const CLI::App& app);
std::string fish_completion(const CLI::App& app);

// The name of the bash function the script registers ("_pybox").
std::string bash_function_name(const CLI::App& app);

// The fixed prose of a man page around what the App says.
struct ManSection {
    std::string title;  // e.g. "ENVIRONMENT"
    std::string roff;   // body, already in man(7) markup
};
struct ManPage {
    int section = 1;
    std::string version;  // the footer's source, e.g. "pybox 0.1.0"
    std::string manual;   // e.g. "User Commands"
    std::string summary;  // the NAME line after "\-"
    std::vector<ManSection> before_commands;  // DESCRIPTION, ...
    std::vector<ManSection> after_commands;   // ENVIRONMENT, FILES, EXIT STATUS, SEE ALSO
};

// A man(7) page: NAME, SYNOPSIS, the fixed sections, the App's own options and its description,
// then one subsection per subcommand (its synopsis, description, options and footer).
std::string man_page(const CLI::App& app, const ManPage& page);

// Plain text made safe for man(7): backslashes and hyphens escaped, a leading '.' or '\''
// guarded. Exposed for tests.
std::string roff_escape(std::string_view text);

}  // namespace pybox::docgen
