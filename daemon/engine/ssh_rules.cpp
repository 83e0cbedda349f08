#include "daemon/engine/ssh_rules.hpp"

#include "common/private_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cstdio>

namespace pybox::engine {

std::string format_sha256_fingerprint(std::string_view digest)
{
    std::string text = util::base64_encode(digest);
    while (!text.empty() && text.back() == '=') text.pop_back();
    return "SHA256:" + text;
}

std::string shell_quote(std::string_view word)
{
    std::string quoted = "'";
    for (char c : word) {
        if (c == '\'')
            quoted += "'\\''";
        else
            quoted += c;
    }
    quoted += '\'';
    return quoted;
}

std::string shell_command(const std::vector<std::string>& argv)
{
    std::string command;
    for (const auto& word : argv) {
        if (!command.empty()) command += ' ';
        command += shell_quote(word);
    }
    return command;
}

bool is_plain_remote_path(std::string_view path)
{
    return std::all_of(path.begin(), path.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("/._@+-").find(c) != std::string_view::npos;
    });
}

std::string engine_stream_command(std::string_view engine_socket)
{
    return "socat -t 3600 STDIO " + shell_quote("UNIX-CONNECT:" + std::string(engine_socket));
}

std::chrono::milliseconds reconnect_delay(int failures, std::chrono::milliseconds first,
                                          std::chrono::milliseconds most)
{
    auto delay = first;
    for (int i = 1; i < failures && delay < most; ++i) delay *= 2;
    return std::min(delay, most);
}

std::string known_hosts_name(std::string_view host, unsigned port)
{
    if (port == 22) return std::string(host);
    return "[" + std::string(host) + "]:" + std::to_string(port);
}

std::string identity_file_problem(bool regular_file, unsigned mode)
{
    // Ownership is ssh's rule too, but libssh2 is handed the path, not an open file: it is not checked here.
    return private_file_problem(regular_file, mode, true);
}

}  // namespace pybox::engine
