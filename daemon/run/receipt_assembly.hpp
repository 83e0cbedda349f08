// The receipt of one sealed run, assembled from what was asked (RunDescription) and what the
// phases observed (RunEvidence, run_evidence.hpp). Pure: no I/O, no engine, no clock, so every
// outcome a receipt can tell has a unit test (tests/unit/receipt_assembly_test.cpp).
//
// It decides how the run ended (termination.hpp's classify_end, once the program started), the
// capture section (capture_record.hpp), the files a files run returns (files_report.hpp), the
// cleanup status, the timings relative to the run's start, the program's environment beyond
// what PyBox set (from the box's report), and every explanation and unknown, in
// the order the run met them: the phases' problems, the removal, then the end, the engine gone,
// the client gone, the output and the files, and cleanup.reconciliation from the evidence's
// summary of the sweep. What the services above decide by (AssembledRun::engine_lost) comes from
// the same verdict, so the receipt is made once and never read back or patched.
#pragma once

#include "daemon/run/run_evidence.hpp"
#include "daemon/run/engine_run_service.hpp"
#include "proto/receipt.hpp"

namespace pybox::daemon {

// The receipt, for a run that moved files the output files its helper's report returned, and
// whether the engine was lost.
AssembledRun assemble_receipt(const RunDescription& description, const RunEvidence& evidence);

// The explanation of one problem a phase met, as the receipt gives it.
proto::Explanation explain_problem(const Problem& problem);

}  // namespace pybox::daemon
