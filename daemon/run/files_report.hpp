// What a run that moved files reports about them: the files helper's report (the bytes after
// the run's marker on the box's stdout) checked strictly and turned into the receipt's `files`
// and the output files returned to the client. Pure, fuzzed (tests/fuzz/files_report_fuzz.cpp).
//
// The report comes out of the box, so it is untrusted: it must be one JSON object of exactly
// the helper's keys (no repeated key, at most 8 levels), its inputs must be the ones sent (same
// names, sizes and SHA-256), every output must obey proto/files.hpp's rules and caps and match
// its own size and SHA-256, every skipped entry must carry a known reason. Anything else keeps
// no output and says why in `errors`; inputs and skipped entries are then taken from what was
// sent and nothing is claimed about the box's side.
#pragma once

#include "proto/files.hpp"
#include "proto/receipt.hpp"
#include "proto/run_request.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::daemon {

// The reasons the helper gives for what it did not bring back (docs/receipt.md "files").
inline constexpr std::string_view k_skip_reasons[] = {"symlink",        "not_regular_file",  "hard_link",
                                                      "name_not_allowed", "too_many_files", "over_total_bytes",
                                                      "too_deep",       "changed_while_read", "unreadable"};
// How many skipped entries the helper lists (the rest are counted in skipped_unlisted).
inline constexpr std::size_t k_max_listed_skipped = 64;
// The report's largest size: 8 MiB of outputs in base64 plus names, hashes and the skipped list.
inline constexpr std::size_t k_max_files_report_bytes = 12 * 1024 * 1024;

struct FilesOutcome {
    proto::FilesRecord record;
    std::vector<proto::FileContent> outputs;
};

// How the report arrived: its bytes (nullopt when the marker never came), and whether it was
// cut at k_max_files_report_bytes.
struct FilesReportEvidence {
    std::optional<std::string_view> report;
    bool report_truncated = false;
};

// The receipt's `files` and the outputs for a run that sent `files`. When the report is missing
// or unreadable, `why_missing` is the first error (e.g. "the box was killed at the deadline
// before the files helper reported").
FilesOutcome read_files_report(const FilesReportEvidence& evidence, const proto::RunRequest::Files& sent,
                               const std::string& why_missing);

}  // namespace pybox::daemon
