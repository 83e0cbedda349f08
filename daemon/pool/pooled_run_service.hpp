// PooledRunService: the EngineRunService (run/engine_run_service.hpp) of a pool of engines. Each
// run goes to the engine the pool chooses (engine_pool.hpp: the least busy verified engine) and
// is run there by that engine's own SealedRunService, with its own run queue, image check and
// sweep; the receipt names the engine (`engine`).
//
// A run that an engine refuses as unreachable before anything was created ("engine_unreachable"
// or "engine_timeout" with no receipt) marks that engine lost and goes to the next choice, so a
// stopped engine costs one failed connect, not a failed run; a run whose engine went away
// mid-run (AssembledRun::engine_lost, decided from its evidence) marks it lost too and is
// returned as it is, its receipt not read. No verified engine: "engine_unreachable" naming every
// engine and why. The client's disconnection is passed on to the engine running the request,
// and a run whose client has gone is not tried on another engine.
//
// Ownership: borrows the pool and the engines' run services (one per pool member, in the pool's
// order), which must outlive it. Runs on the daemon's io_context.
#pragma once

#include "daemon/pool/engine_pool.hpp"
#include "daemon/run/engine_run_service.hpp"

#include <vector>

namespace pybox::daemon {

class PooledRunService final : public EngineRunService {
public:
    PooledRunService(EnginePool& pool, std::vector<EngineRunService*> engines);

    net::awaitable<Expected<AssembledRun>> run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                               net::cancellation_slot cancelled, RunObserver* observer) override;

private:
    EnginePool& m_pool;
    std::vector<EngineRunService*> m_engines;
};

}  // namespace pybox::daemon
