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

std::optional<std::int64_t> expiry_of(const json::object& box)
{
    const auto* labels = box.if_contains("Labels");
    if (labels == nullptr || !labels->is_object()) return std::nullopt;
    const auto* expires = labels->as_object().if_contains(k_label_expires);
    if (expires == nullptr || !expires->is_string()) return std::nullopt;
    const std::string_view text = expires->as_string();
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string string_of(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    return value && value->is_string() ? std::string(value->as_string()) : std::string();
}

}  // namespace

Sweeper::Sweeper(engine::EngineClient& engine, AttemptLog attempts, std::string installation_id,
                 RunReleaser release_run)
    : m_engine(engine), m_attempts(std::move(attempts)), m_installation_id(std::move(installation_id)),
      m_release_run(std::move(release_run))
{
}

net::awaitable<json::value> Sweeper::sweep_once()
{
    const std::int64_t now = unix_seconds(WallClock::now());
    std::int64_t found = 0, removed = 0, waiting = 0, unconfirmed = 0, settled = 0;
    json::array errors;
    std::set<std::string> live_runs;

    const std::vector<std::string> filters{std::string(k_label_owner) + "=" + m_installation_id};
    auto listed = co_await m_engine.list_containers(filters, limits::k_query_timeout);
    const bool reachable = listed.has_value();
    if (!listed) {
        errors.emplace_back(listed.error().message);
    } else {
        for (const auto& item : *listed) {
            if (!item.is_object()) continue;
            const auto& box = item.as_object();
            // The engine filtered by label; check again, since nothing else may ever be touched.
            const auto* labels = box.if_contains("Labels");
            if (!labels || !labels->is_object() || string_of(labels->as_object(), k_label_owner) != m_installation_id)
                continue;
            ++found;
            const std::string id = string_of(box, "Id");
            const auto expires = expiry_of(box);
            if (expires && now < *expires) {
                ++waiting;
                live_runs.insert(string_of(labels->as_object(), k_label_run));
                continue;
            }
            const std::vector<std::string> expired{id};  // named: GCC 12 miscompiles braced lists in co_await calls
            const auto removal = co_await remove_boxes(m_engine, expired, limits::k_cleanup_budget);
            if (removal.all_gone) {
                ++removed;
                continue;
            }
            live_runs.insert(string_of(labels->as_object(), k_label_run));
            errors.emplace_back("box " + id.substr(0, 12) + " could not be confirmed removed");
        }
    }

    for (const auto& note : m_attempts.list()) {
        ++unconfirmed;
        const bool box_may_exist = !reachable || live_runs.count(note.run_id) > 0;
        const bool settle_time = note.expires_at > 0 && now >= note.expires_at + limits::k_settle_after_expiry_s;
        if (box_may_exist || !settle_time) continue;
        if (m_release_run) {
            if (auto released = m_release_run(note.run_id); !released) {
                errors.emplace_back("run " + note.run_id.substr(0, 8) + ": " + released.error().message);
                continue;
            }
        }
        if (m_attempts.remove(note.run_id)) {
            ++settled;
            --unconfirmed;
        }
    }

    m_last_summary = json::object{{"swept_at", rfc3339_utc(WallClock::now())},
                                  {"engine_reachable", reachable},
                                  {"boxes_found", found},
                                  {"boxes_removed", removed},
                                  {"boxes_not_yet_expired", waiting},
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
