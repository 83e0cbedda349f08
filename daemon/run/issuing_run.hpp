// IssuingRunService: the last step of the run pipeline. Every receipt a run answers is issued
// once (proto::issue_receipt: written once, signed once, and kept as the caller's by the
// ReceiptKeeper) before the answer leaves the daemon, and the answer carries that issued
// receipt, whose text the router writes as it is: the bytes kept are the bytes answered and
// streamed. The repair loop runs its steps through this service, so each step's receipt is
// issued as a run's is. A receipt that could not be signed or kept goes out all the same
// (unsigned when signing failed): the answer's receipt_not_kept and the daemon's log say what
// was done and why (the keeper's sentence: "signed ... but could not keep it: WHY"). An Error of
// the inner service is passed on: nothing ran, so nothing is issued.
//
// Borrows the inner service and the keeper, which must outlive it; on the daemon's io_context.
#pragma once

#include "daemon/run/engine_run_service.hpp"
#include "daemon/server/services.hpp"

namespace pybox::daemon {

class IssuingRunService final : public RunService {
public:
    IssuingRunService(EngineRunService& runs, ReceiptKeeper& receipts) : m_runs(runs), m_receipts(receipts) {}

    net::awaitable<Expected<proto::IssuedRunAnswer>> run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                                         net::cancellation_slot cancelled,
                                                         RunObserver* observer) override;

private:
    EngineRunService& m_runs;
    ReceiptKeeper& m_receipts;
};

}  // namespace pybox::daemon
