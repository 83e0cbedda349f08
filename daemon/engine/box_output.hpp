// A box's output as every backend hands it to run/: chunks of bytes, each from stdout or
// stderr, in the order the box wrote them (box_engine.hpp's BoxStreams). How an engine carries
// them (Docker's multiplexed frames: stream_demuxer.hpp) stays inside its backend.
#pragma once

#include "proto/run_events.hpp"

#include <string>

namespace pybox::engine {

struct OutputChunk {
    proto::OutputStream stream = proto::OutputStream::stdout_stream;
    std::string bytes;
    friend bool operator==(const OutputChunk&, const OutputChunk&) = default;
};

}  // namespace pybox::engine
