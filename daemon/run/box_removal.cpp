#include "daemon/run/box_removal.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/limits.hpp"

namespace pybox::daemon {

engine::net::awaitable<RemovalOutcome> remove_boxes(engine::BoxEngine& engine, const std::vector<std::string>& ids,
                                            std::chrono::milliseconds budget)
{
    const auto budget_end = MonoClock::now() + budget;
    RemovalOutcome outcome;
    outcome.all_gone = !ids.empty();
    for (const auto& id : ids) {
        bool gone = false;
        for (int attempt = 0; attempt < 2 && !gone && MonoClock::now() < budget_end; ++attempt) {
            ++outcome.attempts;
            auto removed = co_await engine.remove_box(id, limits::k_remove_timeout);
            if (!removed) {
                outcome.error = removed.error().message;
                outcome.timed_out = removed.error().code == api_error::k_engine_timeout;
                continue;
            }
            auto check = co_await engine.inspect_box(id, limits::k_inspect_timeout);
            gone = !check && check.error().code == api_error::k_engine_no_such_object;
            if (!gone) {
                outcome.error = check ? "the box was still listed after removal" : check.error().message;
                outcome.timed_out = !check && check.error().code == api_error::k_engine_timeout;
            }
        }
        outcome.all_gone = outcome.all_gone && gone;
    }
    if (outcome.all_gone) outcome.error.reset();
    co_return outcome;
}

}  // namespace pybox::daemon
