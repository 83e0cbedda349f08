// pybox: the thin client of pyboxd. The command line is client/cli.cpp's; nothing else here.
#include "client/cli.hpp"

#include <csignal>

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);  // a closed stdout or socket is an error to report, not a crash
    const auto cli = pybox::client::make_cli();
    return pybox::client::run_cli(*cli, argc, argv);
}
