// Fuzzes the fed box's environment report (daemon/kube/environment_report.hpp): the input, cut
// into stdout chunks at the length its first byte chooses, goes through the splitter (never a
// crash; the program's part is exactly what follows the first newline, nothing of it lost or
// added; the report is the parse of the line before it, or unknown with a reason), and the
// parser's variables, written again as a report, parse back the same.
#include "daemon/kube/environment_report.hpp"
#include "proto/box_policy.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include "util/text.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using pybox::fuzz::check;

using namespace pybox::kube;
using pybox::util::hex_encode;


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1) return 0;
    const std::size_t piece = std::size_t{data[0]} + 1;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

    EnvironmentReportSplitter splitter;
    std::string program;
    for (std::size_t at = 0; at < input.size(); at += piece) {
        const auto part = splitter.program_part({pybox::proto::OutputStream::stdout_stream, std::string(input.substr(at, piece))});
        if (!part) continue;
        check(part->stream == pybox::proto::OutputStream::stdout_stream && !part->bytes.empty());
        program += part->bytes;
    }
    const auto newline = input.find('\n');
    const auto report = splitter.report();
    check(report.variables.has_value() != !report.unknown_reason.empty());
    if (newline == std::string_view::npos) {
        check(program.empty() && !report.variables);
        return 0;
    }
    check(program == input.substr(newline + 1));
    const std::string_view line = input.substr(0, newline);
    if (line.size() < k_max_environment_report_bytes) check(report == parse_environment_report(line));
    else check(!report.variables);
    if (!report.variables) return 0;

    std::string again(pybox::proto::k_fed_environment_marker);
    for (const auto& variable : *report.variables) {
        const auto equals = variable.find('=');
        check(equals != std::string::npos && equals > 0);
        again += " " + hex_encode(variable.substr(0, equals)) + "=" + hex_encode(variable.substr(equals + 1));
    }
    check(again == line);
    return 0;
}
