// A kept receipt's file read back (<runtime>/receipts/<run id>.json, {"owner_uid": N, "receipt":
// RECEIPT}, docs/reference.md "Files PyBox keeps") and checked before it is listed or shown
// (docs/api.md "GET /v1/receipts"): its signature must verify with the installation's public
// key over the RFC 8785 form of the receipt (proto/receipt_signature.hpp), and its
// identity.run_id must be the run id the file is kept as. A file that fails either check is still
// read: its entry has signed_receipt false and a `problem` saying which check failed and why. A
// file that is not a kept file at all (not JSON, no owner_uid or receipt object) is an Error,
// "file_unreadable". Pure.
#pragma once

#include "common/error.hpp"
#include "proto/answers.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace pybox::daemon {

struct KeptFile {
    proto::KeptReceipt entry;    // run_id is the one asked for; bytes the text's size
    boost::json::value receipt;  // as the file holds it
};

Expected<KeptFile> read_kept_file(std::string_view text, const std::string& run_id, std::string_view public_key);

}  // namespace pybox::daemon
