#include "daemon/run/box_removal.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/limits.hpp"

namespace pybox::daemon {

namespace {

// One delete and the inspect that must find no such box; records a failure in `outcome`.
engine::net::awaitable<bool> remove_once(engine::BoxEngine& engine, const std::string& id, RemovalOutcome& outcome)
{
    ++outcome.attempts;
    auto removed = co_await engine.remove_box(id, limits::k_remove_timeout);
    if (!removed) {
        outcome.error = removed.error().message;
        outcome.timed_out = removed.error().code == api_error::k_engine_timeout;
        co_return false;
    }
    auto check = co_await engine.inspect_box(id, limits::k_inspect_timeout);
    const bool gone = !check && check.error().code == api_error::k_engine_no_such_object;
    if (!gone) {
        outcome.error = check ? "the box was still listed after removal" : check.error().message;
        outcome.timed_out = !check && check.error().code == api_error::k_engine_timeout;
    }
    co_return gone;
}

}  // namespace

engine::net::awaitable<RemovalOutcome> remove_boxes(engine::BoxEngine& engine, const std::vector<std::string>& ids,
                                                    std::chrono::milliseconds budget)
{
    RemovalOutcome outcome;
    // The boxes not yet confirmed gone; a box the first round did not reach in its budget is
    // left for the retry as one whose removal failed.
    std::vector<std::string> left = ids;
    for (int round = 0; round < 2 && !left.empty(); ++round) {
        const auto round_end = MonoClock::now() + budget;  // the retry's budget is its own
        std::vector<std::string> still_there;
        for (const auto& id : left) {
            if (MonoClock::now() >= round_end || !co_await remove_once(engine, id, outcome)) still_there.push_back(id);
        }
        left = std::move(still_there);
    }
    outcome.all_gone = !ids.empty() && left.empty();
    if (outcome.all_gone) outcome.error.reset();
    if (!outcome.all_gone && !ids.empty() && !outcome.error)
        outcome.error = "the cleanup budget ran out before the box's removal was tried";
    co_return outcome;
}

}  // namespace pybox::daemon
