// The receipt of one sealed run, assembled from what was asked (RunDescription) and what the
// phases observed (RunEvidence, run_evidence.hpp). Pure: no I/O, no engine, no clock, so every
// outcome a receipt can tell has a unit test (tests/unit/receipt_assembly_test.cpp).
//
// It decides how the run ended (termination.hpp's classify_end, once the program started), the
// capture section (capture_record.hpp), the files a files run returns (files_report.hpp), the
// cleanup status, the timings relative to the run's start, and every explanation and unknown, in
// the order the run met them: the phases' problems, the removal, then the end, the engine gone,
// the client gone, the output and the files. What the sweep last did (cleanup.reconciliation) is
// not the run's and is left null.
#pragma once

#include "daemon/run/run_evidence.hpp"
#include "proto/run_answer.hpp"

namespace pybox::daemon {

// The receipt, and for a run that moved files the output files its helper's report returned.
proto::RunAnswer assemble_receipt(const RunDescription& description, const RunEvidence& evidence);

}  // namespace pybox::daemon
