#include "daemon/reconcile/sweeper.hpp"

#include "common/clock.hpp"
#include "common/limits.hpp"
#include "daemon/run/box_removal.hpp"
#include "daemon/run/box_spec.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <charconv>
#include <set>

namespace pybox::daemon {

namespace net = boost::asio;
namespace json = boost::json;

namespace {

// Runs whose traces the sweeper keeps at most; past that, the first by run ID is dropped.
constexpr std::size_t k_max_traced_runs = 1024;

std::optional<std::int64_t> expiry_of(const engine::ListedBox& box)
{
    const std::string text = box.label(k_label_expires);
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

}  // namespace

Sweeper::Sweeper(engine::BoxEngine& engine, AttemptLog attempts, AttemptJournal journal,
                 std::string installation_id, SweepSettings settings)
    : m_engine(engine), m_attempts(std::move(attempts)), m_journal(std::move(journal)),
      m_installation_id(std::move(installation_id)), m_settings(std::move(settings))
{
}

Sweeper::RunTrace& Sweeper::trace(const std::string& run_id)
{
    if (m_traces.size() >= k_max_traced_runs && !m_traces.contains(run_id)) m_traces.erase(m_traces.begin());
    return m_traces[run_id];
}

void Sweeper::note_error(const std::string& run_id, const std::string& error)
{
    auto& errors = trace(run_id).errors;
    if (errors.size() < proto::k_max_attempt_errors)
        errors.push_back(proto::bounded_text(error, proto::k_max_attempt_error_bytes));
}

net::awaitable<Expected<void>> Sweeper::settle(const AttemptNote& note)
{
    const std::string run = "run " + note.run_id.substr(0, 8) + ": ";
    if (m_settings.release_run) {
        auto released = co_await m_settings.release_run(note.run_id);
        if (!released) co_return make_error(released.error().code, run + released.error().message);
    }
    const auto traced = m_traces.find(note.run_id);
    proto::SettledAttempt entry;
    entry.run_id = note.run_id;
    entry.owner_uid = note.owner_uid;
    entry.created_at = proto::bounded_text(note.created_at, proto::k_max_attempt_text_bytes);
    entry.expires_at = note.expires_at;
    entry.container_id = proto::bounded_text(note.container_id, proto::k_max_attempt_text_bytes);
    entry.settled_at = rfc3339_utc(WallClock::now());
    entry.run_parent_released = static_cast<bool>(m_settings.release_run);
    if (traced != m_traces.end()) {
        entry.box_removed_at = traced->second.box_removed_at;
        entry.errors = traced->second.errors;
    }
    entry.box = entry.box_removed_at ? std::string(proto::k_box_removed_by_sweep) : std::string(proto::k_box_not_found);
    if (auto journaled = m_journal.append(entry); !journaled)
        co_return make_error(journaled.error().code, run + journaled.error().message);
    if (auto removed = m_attempts.remove(note.run_id); !removed)
        co_return make_error(removed.error().code, run + removed.error().message);
    m_traces.erase(note.run_id);
    co_return Expected<void>{};
}

net::awaitable<json::value> Sweeper::sweep_once()
{
    const std::int64_t now = unix_seconds(WallClock::now());
    std::int64_t found = 0, removed = 0, waiting = 0, in_progress = 0, unconfirmed = 0, settled = 0;
    json::array errors;
    std::set<std::string> live_runs;
    const auto running = [this](const std::string& run_id) {
        return m_settings.in_progress != nullptr && m_settings.in_progress->contains(run_id);
    };

    const std::vector<std::string> filters{std::string(k_label_owner) + "=" + m_installation_id};
    auto listed = co_await m_engine.list_boxes(filters, limits::k_query_timeout);
    const bool reachable = listed.has_value();
    if (!listed) {
        errors.emplace_back(listed.error().message);
    } else {
        for (const auto& box : *listed) {
            // The engine filtered by label; check again, since nothing else may ever be touched.
            if (box.label(k_label_owner) != m_installation_id) continue;
            ++found;
            const std::string& id = box.id;
            const std::string run_id = box.label(k_label_run);
            const auto expires = expiry_of(box);
            if (running(run_id)) {
                ++in_progress;
                live_runs.insert(run_id);
                continue;
            }
            if (expires && now < *expires) {
                ++waiting;
                live_runs.insert(run_id);
                continue;
            }
            const std::vector<std::string> expired{id};  // named: GCC 12 miscompiles braced lists in co_await calls
            const auto removal = co_await remove_boxes(m_engine, expired, limits::k_cleanup_budget);
            if (removal.all_gone) {
                ++removed;
                trace(run_id).box_removed_at = rfc3339_utc(WallClock::now());
                continue;
            }
            live_runs.insert(run_id);
            const std::string error = "box " + id.substr(0, 12) + " could not be confirmed removed";
            note_error(run_id, error);
            errors.emplace_back(error);
        }
    }

    for (const auto& note : m_attempts.list()) {
        if (note.engine_id != m_settings.engine_id) continue;  // another engine's sweeper settles it
        ++unconfirmed;
        if (running(note.run_id) || !note.readable) continue;
        const bool box_may_exist = !reachable || live_runs.count(note.run_id) > 0;
        const bool settle_time = note.expires_at > 0 && now >= note.expires_at + m_settings.settle_after_expiry_s;
        if (box_may_exist || !settle_time) continue;
        auto settled_now = co_await settle(note);
        if (!settled_now) {
            note_error(note.run_id, settled_now.error().message);
            errors.emplace_back(settled_now.error().message);
            continue;
        }
        ++settled;
        --unconfirmed;
    }

    m_last_summary = json::object{{"swept_at", rfc3339_utc(WallClock::now())},
                                  {"engine_reachable", reachable},
                                  {"boxes_found", found},
                                  {"boxes_removed", removed},
                                  {"boxes_not_yet_expired", waiting},
                                  {"boxes_in_progress", in_progress},
                                  {"attempts_unconfirmed", unconfirmed},
                                  {"attempts_settled", settled},
                                  {"errors", std::move(errors)}};
    co_return m_last_summary;
}

net::awaitable<void> Sweeper::sweep_forever(std::chrono::seconds interval)
{
    net::steady_timer timer(co_await net::this_coro::executor);
    for (;;) {
        co_await sweep_once();
        timer.expires_after(interval);
        auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
        if (ec) co_return;
    }
}

}  // namespace pybox::daemon
