// The environment report of a fed box (proto::fed_box_command): the first line of the box's
// stdout, which its feeder writes before it passes the program a byte. Pure, strict and
// bounded: the bytes are the box's, untrusted.
//
// The line: proto::k_fed_environment_marker, then per variable, in strictly ascending byte order
// of the names, a space, the name's bytes in lower-case hex (at least one byte), '=', the
// value's bytes in lower-case hex (none for an empty value), then a newline. Names and values
// must be UTF-8 (the receipt holds them as text); a name holds no '='.
#pragma once

#include "daemon/engine/box_output.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::kube {

// The longest report read, its newline included; a longer one is dropped (and counted).
inline constexpr std::size_t k_max_environment_report_bytes = 16384;

// The variables of one report line (without its newline), or why it is malformed.
engine::EnvironmentReport parse_environment_report(std::string_view line);

// Takes the report off the front of a fed box's output: every stdout byte up to and including
// the first newline is the feeder's, every later one the program's (the program starts only
// after the report is written whole). Stderr is the program's as it comes. At most
// k_max_environment_report_bytes of the report are kept; beyond them its bytes are dropped
// until its newline. Not thread-safe; one per box.
class EnvironmentReportSplitter {
public:
    // The program's part of `chunk` (stdout without the report's bytes), or nullopt when
    // nothing of it is the program's.
    std::optional<engine::OutputChunk> program_part(engine::OutputChunk chunk);
    // The report, once the output ended or broke: its variables, or why they are not known
    // (no newline came, the line was too long, or it is malformed).
    engine::EnvironmentReport report() const;

private:
    std::string m_line;           // the report's first bytes, up to the bound
    std::uint64_t m_seen = 0;     // every byte of the report seen, its newline included
    bool m_complete = false;      // its newline came
};

}  // namespace pybox::kube
