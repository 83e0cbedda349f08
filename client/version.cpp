// `pybox version`.
#include "client/commands.hpp"

#include "proto/api.hpp"

#include <CLI/CLI.hpp>

namespace pybox::client {

Action configure_version(CLI::App&)
{
    return [] {
        return print({"pybox " PYBOX_VERSION " (API " + std::string(proto::k_api_version) + ")\n", 0});
    };
}

}  // namespace pybox::client
