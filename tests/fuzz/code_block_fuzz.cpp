// Fuzz target: the repair loop reads a program out of a model's answer, untrusted text.
// Invariants: it never crashes; a program it accepts is UTF-8 without NUL, within the source
// limit, ends in one newline, and is the same program as itself.
#include "common/limits.hpp"
#include "daemon/repair/code_block.hpp"
#include "util/text.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view answer(reinterpret_cast<const char*>(data), size);
    const auto read = pybox::repair::program_from_answer(answer);
    if (const auto* none = std::get_if<pybox::repair::NoProgram>(&read)) {
        if (none->why.empty()) std::abort();
        return 0;
    }
    const auto& program = std::get<std::string>(read);
    if (program.empty() || program.back() != '\n' || program.size() > pybox::limits::k_max_source_bytes ||
        !pybox::util::is_valid_utf8(program) || program.find('\0') != std::string::npos ||
        !pybox::repair::same_program(program, program))
        std::abort();
    return 0;
}
