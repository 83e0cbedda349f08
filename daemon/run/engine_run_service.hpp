// EngineRunService: runs one sealed program on an engine (SealedRunService) or on the engine a
// pool chooses (pool/pooled_run_service.hpp), and answers what the run assembled, not yet
// issued. IssuingRunService (issuing_run.hpp) is the only one that takes it further: it issues
// the receipt (signs and keeps it) and answers the issued receipt.
//
// Data flows one way: the receipt is assembled once from the run's evidence (receipt_assembly.hpp,
// the sweep's reconciliation summary included) and is then only read. What the services between
// the run and its issue decide (whether the pool lost its engine) comes with it as a fact of the
// evidence, so none of them reads the receipt back or patches it.
//
// The contract of run() is RunService's (server/services.hpp): an Error means nothing was
// created; the cancellation slot fires when the client disconnects; `observer` may be null.
// Runs on the daemon's io_context.
#pragma once

#include "daemon/server/services.hpp"
#include "proto/files.hpp"
#include "proto/receipt.hpp"
#include "proto/run_request.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <cstdint>
#include <vector>

namespace pybox::daemon {

// One run as its evidence gives it: the receipt, assembled once and not yet issued, a files
// run's output files, and what the pool decides by.
struct AssembledRun {
    proto::Receipt receipt;
    std::vector<proto::FileContent> outputs;
    // The program started and the engine never reported its end (the receipt's ENGINE_LOST): the
    // pool marks the engine lost until a check passes.
    bool engine_lost = false;
};

class EngineRunService {
public:
    virtual ~EngineRunService() = default;
    virtual net::awaitable<Expected<AssembledRun>> run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                                      net::cancellation_slot cancelled, RunObserver* observer) = 0;
};

}  // namespace pybox::daemon
