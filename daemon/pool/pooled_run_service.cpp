#include "daemon/pool/pooled_run_service.hpp"

#include "common/api_error_codes.hpp"

#include <stdexcept>

namespace pybox::daemon {

namespace {

// An engine that could not be reached before anything was created: another may take the run.
bool unreachable_before_start(const Error& error)
{
    return error.code == api_error::k_engine_unreachable || error.code == api_error::k_engine_timeout;
}

}  // namespace

PooledRunService::PooledRunService(EnginePool& pool, std::vector<EngineRunService*> engines)
    : m_pool(pool), m_engines(std::move(engines))
{
    if (m_engines.size() != m_pool.size()) throw std::logic_error("PooledRunService: one run service per engine");
}

net::awaitable<Expected<AssembledRun>> PooledRunService::run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                                             net::cancellation_slot cancelled, RunObserver* observer)
{
    // The client's disconnection reaches whichever engine runs the request, and ends the tries.
    bool disconnected = false;
    net::cancellation_signal forward;
    if (cancelled.is_connected())
        cancelled.assign([&](net::cancellation_type type) {
            disconnected = true;
            forward.emit(type);
        });
    struct SlotRelease {
        net::cancellation_slot slot;
        ~SlotRelease() { if (slot.is_connected()) slot.clear(); }
    } release{cancelled};

    // Each engine is tried at most once: a lost engine is not verified until a check passes.
    for (std::size_t tried = 0; tried < m_engines.size() && !disconnected; ++tried) {
        const auto chosen = m_pool.choose();
        if (!chosen) break;
        const std::size_t index = *chosen;
        const EnginePool::Busy busy(m_pool, index);
        auto answer = co_await m_engines[index]->run(request, owner_uid, forward.slot(), observer);
        if (!answer) {
            if (!unreachable_before_start(answer.error())) co_return answer;
            m_pool.record_lost(index, answer.error().message);
            continue;
        }
        if (answer->engine_lost)
            m_pool.record_lost(index, "run " + answer->receipt.identity.run_id.substr(0, 8) +
                                          " lost the engine mid-run.");
        co_return answer;
    }
    if (disconnected) co_return make_error(api_error::k_client_disconnected, "The client went away before the run began.");
    co_return make_error(api_error::k_engine_unreachable, m_pool.why_none());
}

}  // namespace pybox::daemon
