// ModelRepairService: the daemon's RepairService, the repair loop (repair_loop.hpp) over the
// daemon's RunService and the configured model (docs/model.md).
//
// Without a model in config.json every repair is refused with "model_not_configured" before
// anything runs. A repair may take at most limits::k_repair_budget: when it runs out, the step in
// progress is cancelled (a run's box is killed and removed, a model call ends) and the record
// says "budget_exhausted"; when the client goes away, the same with "cancelled".
//
// Ownership: borrows the RunService and the ModelClient (nullptr: no model), which outlive it.
// Executor: the daemon's io_context, given at construction; repairs may overlap, each on its
// own coroutine.
#pragma once

#include "daemon/model/model_client.hpp"
#include "daemon/server/services.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>

namespace pybox::repair {

class ModelRepairService final : public daemon::RepairService {
public:
    ModelRepairService(boost::asio::any_io_executor executor, daemon::RunService& runs, model::ModelClient* model,
                       model::ModelOptions options, std::chrono::milliseconds budget);

    boost::asio::awaitable<Expected<proto::RepairRecord>> repair(proto::RepairRequest request, std::uint32_t owner_uid,
                                                                boost::asio::cancellation_slot cancelled) override;

private:
    boost::asio::any_io_executor m_executor;
    daemon::RunService& m_runs;
    model::ModelClient* m_model;
    model::ModelOptions m_options;
    std::chrono::milliseconds m_budget;
};

}  // namespace pybox::repair
