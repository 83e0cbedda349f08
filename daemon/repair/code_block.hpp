// Reading the one program out of a model's answer (untrusted text, like a program's output).
//
// The answer must hold exactly one fenced code block: an opening line of three or more backticks
// (after at most three spaces) with an optional info string of one word, which must be empty,
// "python", "python3" or "py" (any case); the block's lines; and a closing line of at least as
// many backticks and nothing else but spaces. Text around the block is ignored. A fence of
// tildes is a block too (CommonMark's other fence), so it counts when blocks are counted.
//
// The program is the block's lines joined with "\n" (a "\r" before a line's end is dropped),
// ending in one "\n". It must be well-formed UTF-8 without NUL, hold something besides white
// space, and be at most limits::k_max_source_bytes. Pure; fuzzed
// (tests/fuzz/code_block_fuzz.cpp).
#pragma once

#include <string>
#include <string_view>
#include <variant>

namespace pybox::repair {

// Why an answer has no usable program: one sentence for the repair record.
struct NoProgram {
    std::string why;
};

std::variant<std::string, NoProgram> program_from_answer(std::string_view answer);

// Two programs are the same when they differ only in line endings ("\r\n" or "\n") and in white
// space at the end of lines or of the text: the model repeating a program it was shown.
bool same_program(std::string_view a, std::string_view b);

}  // namespace pybox::repair
