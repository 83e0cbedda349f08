// A box's output as every backend hands it to run/: chunks of bytes, each from stdout or
// stderr, in the order the box wrote them (box_engine.hpp's BoxStreams). How an engine carries
// them (Docker's multiplexed frames: stream_demuxer.hpp) stays inside its backend.
#pragma once

#include "proto/run_events.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pybox::engine {

struct OutputChunk {
    proto::OutputStream stream = proto::OutputStream::stdout_stream;
    std::string bytes;
    friend bool operator==(const OutputChunk&, const OutputChunk&) = default;
};

// The program's environment as the box reported it before the program started (a cluster's
// fed box does: proto::fed_box_command), taken off its output by the backend: every variable
// ("NAME=value", in ascending byte order of the names), or why it is not known (one sentence).
struct EnvironmentReport {
    std::optional<std::vector<std::string>> variables;
    std::string unknown_reason;  // when `variables` is nullopt

    friend bool operator==(const EnvironmentReport&, const EnvironmentReport&) = default;
};

}  // namespace pybox::engine
