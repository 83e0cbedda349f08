#include "client/commands.hpp"

#include <cstdio>

namespace pybox::client {

int fail(const Error& error)
{
    const std::string line = "pybox: " + error.message + "\n";
    write_bytes(stderr, line);
    return k_exit_pybox_failed;
}

void write_bytes(std::FILE* stream, std::string_view bytes)
{
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), stream);
    std::fflush(stream);
}

int print(const Rendered& rendered)
{
    write_bytes(rendered.exit_code == 0 ? stdout : stderr, rendered.text);
    return rendered.exit_code;
}

}  // namespace pybox::client
