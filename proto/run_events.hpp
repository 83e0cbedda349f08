// The events of a streamed run (POST /v1/runs with `Accept: application/x-ndjson`, docs/api.md
// "Streamed runs"): one JSON object per line, each ending in "\n", in this order:
//
//   {"event":"started","run_id":ID}                          the program was given to its box
//   {"event":"stdout"|"stderr","encoding":"utf-8"|"base64","data":TEXT}
//                                                             bytes the receipt keeps, in order
//   {"event":"receipt","answer":ANSWER}                       the run's answer, as unstreamed,
//                                                             with "receipt_not_kept":WHY when
//                                                             the daemon could not keep it
//   {"event":"error","error":{"code","message","retryable"}}  instead of a receipt (never after
//                                                             a run that started, in v1)
//
// An output event carries at most k_max_event_data_bytes of the stream; valid UTF-8 goes as text
// (cut only between characters), anything else as base64, so the bytes survive exactly and the
// concatenation of a stream's events is the receipt's kept bytes of it. The writers and the
// strict reader (untrusted bytes at the client: fuzzed) are pure.
#pragma once

#include "common/error.hpp"
#include "proto/answers.hpp"
#include "util/read_mode.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::proto {

inline constexpr std::string_view k_run_events_media_type = "application/x-ndjson";
inline constexpr std::size_t k_max_event_data_bytes = 16 * 1024;

enum class OutputStream { stdout_stream, stderr_stream };

std::string started_event(std::string_view run_id);
// Appends one output event per piece of at most k_max_event_data_bytes (none for no bytes).
void append_output_events(std::string& lines, OutputStream stream, std::string_view bytes);
// `answer_json` is the unstreamed answer's text (one line), carried byte for byte;
// `receipt_not_kept` says why the daemon did not keep its receipt (absent: it did).
std::string receipt_event(std::string_view answer_json, const std::optional<std::string>& receipt_not_kept);
std::string error_event(const ErrorAnswer& error);

// How many leading bytes of `bytes` end on a character boundary: all of them, unless they end
// with the beginning of a UTF-8 sequence that more bytes may complete (at most 3 held back).
std::size_t utf8_complete_prefix(std::string_view bytes);

struct RunEvent {
    enum class Kind { started, output, receipt, error, unknown };
    Kind kind = Kind::unknown;
    std::string run_id;                    // started
    OutputStream stream = OutputStream::stdout_stream;  // output
    std::string bytes;                     // output, decoded
    boost::json::value answer;             // receipt
    std::optional<std::string> receipt_not_kept;  // receipt: why the daemon did not keep it
    ErrorAnswer error;                     // error
};

// One line without its "\n". Strict: any key or event this version does not know is refused;
// tolerant (a client of a newer daemon): unknown keys are ignored and an unknown event is
// Kind::unknown. Both refuse a wrong type, an unknown encoding, bad base64 and data over the
// bound: "invalid_answer".
Expected<RunEvent> parse_run_event(std::string_view line, util::ReadMode mode);

}  // namespace pybox::proto
