// The receipt's capture section from what the output stream left, and the explanations it
// calls for (OUTPUT_TRUNCATED for each stream over the cap, STREAM_ERROR). Pure: the run
// gathers the evidence, this writes it down.
#pragma once

#include "daemon/run/output_capture.hpp"
#include "proto/receipt.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace pybox::daemon {

struct CaptureEvidence {
    const OutputCapture& output;           // finished
    bool started = false;                  // the box was started
    bool exit_observed = false;            // the engine reported the exit
    bool stream_ended = false;             // the attach stream reached its end
    std::optional<std::string> stream_error;  // a broken or stuck stream, as the run saw it
    std::optional<std::string> malformed;     // the engine's stream broke its own format
    std::size_t output_limit_bytes = 0;
    std::string provenance;  // how the output reached PyBox (BoxEngine::output_provenance)
};

// Fills receipt.capture and appends the explanations. The output is complete only when the box
// started, its exit was reported, the stream ended cleanly and nothing was dropped.
void record_capture(const CaptureEvidence& evidence, proto::Receipt& receipt);

}  // namespace pybox::daemon
