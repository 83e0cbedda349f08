#include "daemon/repair/repair_service.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/repair/repair_loop.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <optional>

namespace pybox::repair {

namespace net = boost::asio;

namespace {

// What ends a repair early, shared with the budget timer's and the client's handlers, which may
// run after the repair's coroutine has ended: they then find no step to stop.
struct RepairStop {
    std::optional<proto::StopReason> reason;
    net::cancellation_signal* step = nullptr;  // the step in progress, while one is

    void stop(proto::StopReason why)
    {
        if (!reason) reason = why;
        if (step != nullptr) step->emit(net::cancellation_type::terminal);
    }
};

// Points `stop.step` at a step's own signal while the step runs.
class StepSignal {
public:
    explicit StepSignal(RepairStop& stop) : m_stop(stop) { m_stop.step = &m_signal; }
    ~StepSignal() { m_stop.step = nullptr; }
    StepSignal(const StepSignal&) = delete;
    StepSignal& operator=(const StepSignal&) = delete;
    net::cancellation_slot slot() { return m_signal.slot(); }

private:
    RepairStop& m_stop;
    net::cancellation_signal m_signal;
};

}  // namespace

ModelRepairService::ModelRepairService(net::any_io_executor executor, daemon::RunService& runs, model::ModelClient* model,
                                       model::ModelOptions options, std::chrono::milliseconds budget)
    : m_executor(std::move(executor)), m_runs(runs), m_model(model), m_options(options), m_budget(budget)
{
}

net::awaitable<Expected<proto::RepairRecord>> ModelRepairService::repair(proto::RepairRequest request, std::uint32_t owner_uid,
                                                                         net::cancellation_slot cancelled)
{
    if (m_model == nullptr)
        co_return make_error(api_error::k_model_not_configured,
                             "This pyboxd has no model to ask: add a \"model\" object to its config.json (docs/model.md) and "
                             "restart it.");
    auto stop = std::make_shared<RepairStop>();
    if (cancelled.is_connected())
        cancelled.assign([stop](net::cancellation_type) { stop->stop(proto::StopReason::cancelled); });
    struct SlotRelease {
        net::cancellation_slot slot;
        ~SlotRelease() { if (slot.is_connected()) slot.clear(); }
    } release{cancelled};
    net::steady_timer budget(m_executor, m_budget);
    budget.async_wait([stop](const boost::system::error_code& ec) {
        if (!ec) stop->stop(proto::StopReason::budget_exhausted);
    });

    RepairActions actions;
    actions.run = [this, stop, owner_uid](proto::ValidRunRequest run) -> net::awaitable<Expected<proto::RunAnswer>> {
        StepSignal step(*stop);
        auto issued = co_await m_runs.run(std::move(run), owner_uid, step.slot(), nullptr);
        if (!issued) co_return issued.error();
        // The repair record holds each step's receipt as issued (its signature included).
        co_return proto::RunAnswer{issued->receipt.receipt(), std::move(issued->outputs),
                                   std::move(issued->receipt_not_kept)};
    };
    actions.ask = [this, stop](std::vector<model::ModelMessage> messages) -> net::awaitable<Expected<model::ModelAnswer>> {
        StepSignal step(*stop);
        auto call = m_model->complete(std::move(messages), m_options);
        co_return co_await net::co_spawn(m_executor, std::move(call), net::bind_cancellation_slot(step.slot(), net::use_awaitable));
    };
    actions.stopped = [stop] { return stop->reason; };
    auto record = co_await run_repair(std::move(request), std::move(actions));
    budget.cancel();
    co_return record;
}

}  // namespace pybox::repair
