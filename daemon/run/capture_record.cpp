#include "daemon/run/capture_record.hpp"

namespace pybox::daemon {

using proto::explain;

void record_capture(const CaptureEvidence& evidence, proto::Receipt& receipt)
{
    const auto& out = evidence.output.stdout_capture();
    const auto& err = evidence.output.stderr_capture();
    auto& capture = receipt.capture;
    capture.stdout_stream = proto::StreamRecord{out.kept, out.total_bytes};
    capture.stderr_stream = proto::StreamRecord{err.kept, err.total_bytes};
    capture.stream_error = evidence.stream_error;
    capture.provenance = evidence.provenance;
    if (evidence.malformed) capture.stream_error = "malformed output stream: " + *evidence.malformed;
    capture.output_complete = evidence.started && evidence.exit_observed && evidence.stream_ended &&
                              !capture.stream_error && !out.truncated() && !err.truncated();
    for (const auto* stream : {&out, &err}) {
        if (!stream->truncated()) continue;
        const char* name = stream == &out ? "stdout" : "stderr";
        receipt.explanations.push_back(explain(
            "OUTPUT_TRUNCATED",
            std::string("The program wrote more to ") + name + " than the output limit; the first " +
                std::to_string(stream->kept.size()) + " bytes were kept and the rest counted.",
            {{"stream", name},
             {"bytes_kept", stream->kept.size()},
             {"bytes_dropped", stream->dropped_bytes()},
             {"output_limit_bytes", evidence.output_limit_bytes}}));
    }
    if (capture.stream_error && evidence.started)
        receipt.explanations.push_back(explain("STREAM_ERROR", *capture.stream_error));
}

}  // namespace pybox::daemon
