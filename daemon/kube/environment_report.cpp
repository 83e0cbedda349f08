#include "daemon/kube/environment_report.hpp"

#include "proto/box_policy.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace pybox::kube {

namespace {

engine::EnvironmentReport malformed(const std::string& problem)
{
    return {std::nullopt, "the box's first process reported the program's environment in a malformed line: " + problem};
}

int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// `hex` decoded, or nullopt unless it is pairs of lower-case hex digits.
std::optional<std::string> from_hex(std::string_view hex)
{
    if (hex.size() % 2 != 0) return std::nullopt;
    std::string bytes;
    bytes.reserve(hex.size() / 2);
    for (std::size_t at = 0; at < hex.size(); at += 2) {
        const int high = hex_digit(hex[at]);
        const int low = hex_digit(hex[at + 1]);
        if (high < 0 || low < 0) return std::nullopt;
        bytes += static_cast<char>(high * 16 + low);
    }
    return bytes;
}

}  // namespace

engine::EnvironmentReport parse_environment_report(std::string_view line)
{
    if (line.size() >= k_max_environment_report_bytes)
        return malformed("it is longer than " + std::to_string(k_max_environment_report_bytes) + " bytes");
    if (!line.starts_with(proto::k_fed_environment_marker))
        return malformed("it does not start with \"" + std::string(proto::k_fed_environment_marker) + "\"");
    std::string_view rest = line.substr(proto::k_fed_environment_marker.size());
    std::vector<std::string> variables;
    std::string previous_name;
    while (!rest.empty()) {
        if (rest.front() != ' ') return malformed("a variable is not preceded by one space");
        rest.remove_prefix(1);
        const std::string_view item = rest.substr(0, rest.find(' '));
        rest.remove_prefix(item.size());
        const auto equals = item.find('=');
        if (equals == std::string_view::npos) return malformed("a variable has no '='");
        const auto name = from_hex(item.substr(0, equals));
        const auto value = from_hex(item.substr(equals + 1));
        if (!name || !value) return malformed("a name or value is not lower-case hex digits in pairs");
        if (name->empty()) return malformed("a variable has an empty name");
        if (name->find_first_of(std::string_view("=\0", 2)) != std::string::npos ||
            value->find('\0') != std::string::npos)
            return malformed("a name holds '=' or NUL, or a value NUL");
        if (!util::is_valid_utf8(*name) || !util::is_valid_utf8(*value))
            return malformed("a name or value is not UTF-8");
        if (!variables.empty() && !(previous_name < *name))
            return malformed("the names are not in strictly ascending order");
        previous_name = *name;
        variables.push_back(*name + "=" + *value);
    }
    return {std::move(variables), ""};
}

std::optional<engine::OutputChunk> EnvironmentReportSplitter::program_part(engine::OutputChunk chunk)
{
    if (m_complete || chunk.stream != proto::OutputStream::stdout_stream) return chunk;
    const auto newline = chunk.bytes.find('\n');
    const std::size_t report_bytes = newline == std::string::npos ? chunk.bytes.size() : newline + 1;
    m_seen += report_bytes;
    if (m_line.size() < k_max_environment_report_bytes)
        m_line.append(chunk.bytes, 0, std::min(report_bytes, k_max_environment_report_bytes - m_line.size()));
    if (newline == std::string::npos) return std::nullopt;
    m_complete = true;
    chunk.bytes.erase(0, report_bytes);
    if (chunk.bytes.empty()) return std::nullopt;
    return chunk;
}

engine::EnvironmentReport EnvironmentReportSplitter::report() const
{
    if (!m_complete)
        return {std::nullopt, m_seen == 0 ? "the box's output ended before its first process reported the program's "
                                            "environment"
                                          : "the box's output ended inside its first process's report of the "
                                            "program's environment, after " +
                                                std::to_string(m_seen) + " bytes of it"};
    if (m_seen > k_max_environment_report_bytes)
        return {std::nullopt, "the box's first process reported the program's environment in " + std::to_string(m_seen) +
                                  " bytes, more than the " + std::to_string(k_max_environment_report_bytes) + " read"};
    return parse_environment_report(std::string_view(m_line).substr(0, m_line.size() - 1));
}

}  // namespace pybox::kube
