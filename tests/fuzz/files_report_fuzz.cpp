// Fuzz target: the daemon reads the files helper's report from the box's stdout (untrusted
// bytes). Invariants: it never crashes; what it keeps obeys the caps and rules of
// proto/files.hpp; a report it refuses keeps no output and says why; the inputs listed are
// always the ones sent.
#include "common/limits.hpp"
#include "daemon/run/files_report.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace pybox;
    proto::RunRequest::Files sent;
    sent.inputs.push_back(proto::FileContent{"data.csv", "a,b\n1,2\n"});
    sent.outputs = true;
    const std::string_view report(reinterpret_cast<const char*>(data), size);
    const auto outcome = daemon::read_files_report({report, false}, sent, "missing");
    if (outcome.record.inputs.size() != 1 || outcome.record.inputs[0].name != "data.csv") std::abort();
    if (!outcome.record.errors.empty() && !outcome.outputs.empty() && outcome.record.errors.front().find("no output") != std::string::npos)
        std::abort();
    if (outcome.outputs.size() != outcome.record.outputs.size()) std::abort();
    if (!proto::check_file_set(outcome.outputs, {limits::k_max_output_files, limits::k_max_output_bytes}, "x", "output"))
        std::abort();
    return 0;
}
