#include "daemon/kube/pod_end_wait.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "daemon/kube/kube_status.hpp"
#include "daemon/kube/pod_watch_event.hpp"
#include "util/text.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <utility>

namespace pybox::kube {

net::awaitable<void> pause(Timeout interval)
{
    net::steady_timer timer(co_await net::this_coro::executor);
    timer.expires_after(interval);
    co_await timer.async_wait(net::as_tuple(net::use_awaitable));
}

namespace {

using Clock = std::chrono::steady_clock;

Error stopped() { return make_error(api_error::k_cancelled, "the wait for the box's end was stopped"); }

Timeout left_until(Clock::time_point deadline)
{
    return std::chrono::duration_cast<Timeout>(deadline - Clock::now());
}

}  // namespace

PodEndWait::PodEndWait(ClientSource client, ReadPod read_pod, std::string pods_path, PodRef ref, OnEnd on_end)
    : m_client(std::move(client)),
      m_read_pod(std::move(read_pod)),
      m_pods_path(std::move(pods_path)),
      m_ref(std::move(ref)),
      m_on_end(std::move(on_end))
{
}

void PodEndWait::cancel()
{
    m_cancelled = true;
    if (m_open != nullptr) m_open->cancel();
}

std::string PodEndWait::watch_path(const std::string& version, std::chrono::seconds timeout) const
{
    return m_pods_path + "?watch=1&fieldSelector=" + util::url_encode("metadata.name=" + m_ref.name) +
           "&resourceVersion=" + util::url_encode(version) + "&timeoutSeconds=" + std::to_string(timeout.count());
}

std::optional<Expected<void>> PodEndWait::take(boost::json::value pod, bool deleted)
{
    const std::string id = pod_ref_id(m_ref);
    if (pod_facts(pod).uid != m_ref.uid)
        return Expected<void>(make_error(api_error::k_engine_no_such_object, "no Pod " + id));
    if (shows_end(pod)) {
        m_on_end(std::move(pod));
        return Expected<void>{};
    }
    if (deleted) return Expected<void>(make_error(api_error::k_engine_no_such_object, "no Pod " + id + " (deleted)"));
    return std::nullopt;
}

net::awaitable<Expected<void>> PodEndWait::ended(Timeout timeout)
{
    const auto deadline = Clock::now() + timeout;
    std::string version;     // the last version seen; empty: read the Pod first
    bool watchable = true;   // false once the apiserver refused the watch
    for (;;) {
        if (m_cancelled) co_return stopped();
        const auto left = left_until(deadline);
        if (left <= Timeout::zero())
            co_return make_error(api_error::k_engine_timeout, "the Pod " + pod_ref_id(m_ref) + " did not end in time");
        if (version.empty() || !watchable) {
            auto pod = co_await m_read_pod(std::min(left, limits::k_query_timeout));
            if (!pod && pod.error().code != api_error::k_engine_timeout) co_return pod.error();
            if (pod) {
                version = pod_facts(*pod).resource_version;
                if (auto end = take(std::move(*pod), false)) co_return std::move(*end);
            }
            if (!pod || !watchable || version.empty()) {
                co_await pause(k_pod_poll_interval);
                continue;
            }
        }
        auto client = m_client();
        if (!client) co_return client.error();
        auto outcome = co_await follow(**client, version, deadline);
        if (auto* end = std::get_if<Expected<void>>(&outcome)) co_return std::move(*end);
        switch (std::get<WatchClosed>(outcome)) {
        case WatchClosed::reopen: break;
        case WatchClosed::reread: version.clear(); break;
        case WatchClosed::refused: watchable = false; break;
        }
        // An apiserver that closes every watch at once is asked no more often than it was read.
        co_await pause(k_pod_poll_interval);
    }
}

net::awaitable<PodEndWait::WatchOutcome> PodEndWait::follow(KubeClient& client, std::string& version,
                                                             Clock::time_point deadline)
{
    const auto left = left_until(deadline);
    const auto seconds = std::clamp(std::chrono::ceil<std::chrono::seconds>(left), std::chrono::seconds(1),
                                    std::chrono::seconds(k_pod_watch_seconds));
    // The apiserver closes the watch after `seconds`; one that does not is closed here soon after.
    const auto watch_deadline = std::min(deadline, Clock::now() + seconds + limits::k_query_timeout);
    auto opened = co_await client.get_lines(watch_path(version, seconds), std::min(left, limits::k_query_timeout),
                                            watch_deadline, k_max_pod_watch_line_bytes);
    if (!opened) {
        if (opened.error().code == api_error::k_engine_timeout) co_return WatchClosed::reopen;
        co_return Expected<void>(opened.error());
    }
    if (auto* refusal = std::get_if<KubeReply>(&*opened)) {
        if (refusal->status == 410) co_return WatchClosed::reread;
        if (refusal->status == 403 || refusal->status == 405) co_return WatchClosed::refused;
        co_return Expected<void>(status_error(refusal->what, refusal->status, refusal->body));
    }
    auto& lines = *std::get<std::unique_ptr<KubeLineStream>>(*opened);
    m_open = &lines;
    struct Closing {
        KubeLineStream*& open;
        ~Closing() { open = nullptr; }
    } closing{m_open};
    for (;;) {
        if (m_cancelled) co_return Expected<void>(stopped());
        auto line = co_await lines.next_line();
        if (m_cancelled) co_return Expected<void>(stopped());
        if (!line) co_return line.error().code == api_error::k_engine_protocol ? WatchClosed::reread : WatchClosed::reopen;
        if (!*line) co_return WatchClosed::reopen;
        auto event = parse_pod_watch_event(**line);
        if (!event || event->type == WatchEventType::error) co_return WatchClosed::reread;
        version = event->resource_version;
        if (event->type == WatchEventType::bookmark) continue;
        if (auto end = take(std::move(event->pod), event->type == WatchEventType::deleted)) co_return std::move(*end);
    }
}

}  // namespace pybox::kube
