// pybox_docgen KIND OUTPUT: writes one generated file at build time from the same CLI11
// definitions `pybox` and `pyboxd` parse with. KIND is bash, zsh, fish (pybox's completion),
// man1 (pybox(1)) or man8 (pyboxd(8)). The man pages' fixed prose lives here.
#include "client/cli.hpp"
#include "daemon/daemon_cli.hpp"
#include "packaging/docgen/cli_docs.hpp"
#include "packaging/docgen/man_prose.hpp"

#include <fstream>
#include <iostream>
#include <string_view>

int main(int argc, char** argv)
{
    using namespace pybox;
    if (argc != 3) {
        std::cerr << "usage: pybox_docgen bash|zsh|fish|man1|man8 OUTPUT\n";
        return 2;
    }
    const std::string_view kind = argv[1];
    const auto client = client::make_cli();
    CLI::App daemon;
    daemon::DaemonOptions daemon_options;
    daemon::configure_daemon_cli(daemon, daemon_options);
    std::string text;
    if (kind == "bash")
        text = docgen::bash_completion(client->app);
    else if (kind == "zsh")
        text = docgen::zsh_completion(client->app);
    else if (kind == "fish")
        text = docgen::fish_completion(client->app);
    else if (kind == "man1")
        text = docgen::man_page(client->app, docgen::client_man_prose());
    else if (kind == "man8")
        text = docgen::man_page(daemon, docgen::daemon_man_prose());
    else {
        std::cerr << "pybox_docgen: unknown kind " << kind << "\n";
        return 2;
    }
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        std::cerr << "pybox_docgen: cannot write " << argv[2] << "\n";
        return 1;
    }
    return 0;
}
