// The answer of POST /v1/runs (docs/api.md): for a run that moved no files, the receipt itself;
// for a run whose request had "files", {"receipt": RECEIPT, "outputs": [{"name", "base64"}]}
// with the output files the request asked for (an empty array otherwise). Reading follows
// receipt_from_json's modes; the outputs' names and caps are checked as proto/files.hpp says
// ("invalid_answer" otherwise), because they came out of the box. Pure.
//
// `receipt_not_kept` is not part of that JSON: the daemon says it beside the answer (the
// k_receipt_not_kept_header of an unstreamed answer, the receipt event's key of a streamed one).
//
// The daemon answers an IssuedRunAnswer, written by run_answer_text() around its receipt's issued
// text (receipt_signature.hpp), so the receipt's bytes in the answer are the ones kept and
// streamed; RunAnswer is the answer as a client reads it, and to_json() writes one in the same
// shape (tests, tools).
#pragma once

#include "common/error.hpp"
#include "proto/files.hpp"
#include "proto/receipt.hpp"
#include "proto/receipt_signature.hpp"
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

// The answer of a run as the daemon issued it.
struct IssuedRunAnswer {
    IssuedReceipt receipt;
    std::vector<FileContent> outputs;
    std::optional<std::string> receipt_not_kept;  // as RunAnswer's
};

// The answer's text, one line: the receipt's issued text itself when receipt.files is null, else
// {"receipt":TEXT,"outputs":[...]} built around it. The bytes to_json() of the same answer would
// give, without writing the receipt again.
std::string run_answer_text(const IssuedRunAnswer& answer);

// The receipt alone when receipt.files is null, else the object with "receipt" and "outputs".
boost::json::value to_json(const RunAnswer& answer);
// `moved_files`: whether the request had "files" (so the answer has the second shape).
Expected<RunAnswer> run_answer_from_json(const boost::json::value& document, util::ReadMode mode, bool moved_files);

}  // namespace pybox::proto
