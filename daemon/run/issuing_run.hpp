// IssuingRunService: the last step of the run pipeline. Every receipt a run answers is issued
// (signed and kept as the caller's, by the ReceiptKeeper) before the answer leaves the daemon;
// the repair loop runs its steps through this service, so each step's receipt is issued as a
// run's is. A receipt that could not be signed or kept goes out all the same (unsigned when
// signing failed): the answer's receipt_not_kept and the daemon's log say what was done and why
// (the keeper's Error: "signed ... but could not keep it: WHY"). An Error of the inner service is
// passed on: nothing ran, so nothing is issued.
//
// Borrows the inner service and the keeper, which must outlive it; on the daemon's io_context.
#pragma once

#include "daemon/server/services.hpp"

namespace pybox::daemon {

class IssuingRunService final : public RunService {
public:
    IssuingRunService(RunService& runs, ReceiptKeeper& receipts) : m_runs(runs), m_receipts(receipts) {}

    net::awaitable<Expected<proto::RunAnswer>> run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                                   net::cancellation_slot cancelled, RunObserver* observer) override;

private:
    RunService& m_runs;
    ReceiptKeeper& m_receipts;
};

}  // namespace pybox::daemon
