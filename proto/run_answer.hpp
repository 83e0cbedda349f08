// The answer of POST /v1/runs (docs/api.md): for a run that moved no files, the receipt itself;
// for a run whose request had "files", {"receipt": RECEIPT, "outputs": [{"name", "base64"}]}
// with the output files the request asked for (an empty array otherwise). Reading follows
// receipt_from_json's modes; the outputs' names and caps are checked as proto/files.hpp says
// ("invalid_answer" otherwise), because they came out of the box. Pure.
//
// `receipt_not_kept` is not part of that JSON: the daemon says it beside the answer (the
// k_receipt_not_kept_header of an unstreamed answer, the receipt event's key of a streamed one).
#pragma once

#include "common/error.hpp"
#include "proto/files.hpp"
#include "proto/receipt.hpp"
#include "util/read_mode.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

namespace pybox::proto {

struct RunAnswer {
    Receipt receipt;
    std::vector<FileContent> outputs;
    // Why the daemon did not keep the receipt (docs/api.md "POST /v1/runs"); absent when it did.
    std::optional<std::string> receipt_not_kept;

    friend bool operator==(const RunAnswer&, const RunAnswer&) = default;
};

// The receipt alone when receipt.files is null, else the object with "receipt" and "outputs".
boost::json::value to_json(const RunAnswer& answer);
// `moved_files`: whether the request had "files" (so the answer has the second shape).
Expected<RunAnswer> run_answer_from_json(const boost::json::value& document, util::ReadMode mode, bool moved_files);

}  // namespace pybox::proto
