// PodEndWait: the BoxEnd (daemon/engine/box_engine.hpp) of a box on a cluster: the wait for the
// first version of its Pod that shows the box's end (pod_state.hpp's shows_end()), read by a
// watch of that one Pod, not by reading it again and again.
//
// The wait reads the Pod once (its resourceVersion), then watches it from there (GET
// .../pods?watch=1&fieldSelector=metadata.name%3DNAME&resourceVersion=RV&timeoutSeconds=
// k_pod_watch_seconds): every event is read strictly (pod_watch_event.hpp). A watch that closes
// (its timeoutSeconds, the apiserver's own limit, a broken connection or a deadline of its own)
// is opened again from the last version seen; a 410 Gone, an ERROR event or an event that cannot
// be read starts again from a fresh read of the Pod. The watch's short timeoutSeconds is what
// notices an apiserver that went away (one in its graceful stop keeps an open watch open and
// silent) within k_pod_watch_seconds: opening the next watch fails then, as a read would. An
// apiserver that refuses the watch itself (403: a Role without `watch`; 405) has the Pod read
// every k_pod_poll_interval instead, as before the watch.
//
// Failures, as the reads of the Pod (kube_client.hpp): a read or a watch that cannot be opened
// ends the wait with its Error, but for "engine_timeout", which is tried again until the wait's
// own timeout; "engine_no_such_object" when the Pod is deleted, or its name is another Pod's,
// before its end; "cancelled" after cancel(): at once while a watch is read, else once the read
// or the opening of a watch under way ends (within limits::k_query_timeout). Between two watches
// the wait pauses k_pod_poll_interval, so an apiserver that closes every watch at once is asked
// no more often than the Pod was read before the watch.
//
// Runs on the executor of whoever awaits ended(); the reader and the client source must outlive
// the wait. `on_end` is given the Pod's version that showed the end.
#pragma once

#include "daemon/engine/box_engine.hpp"
#include "daemon/kube/kube_client.hpp"
#include "daemon/kube/pod_state.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <variant>

namespace pybox::kube {

// How often the Pod is read when the apiserver refuses to watch it.
inline constexpr std::chrono::milliseconds k_pod_poll_interval{50};
// The timeoutSeconds of each watch: how long a watch stays open before it is opened again.
inline constexpr std::chrono::seconds k_pod_watch_seconds{3};
// One event of the watch: the Pod whole, a few KiB in practice (the termination message at most
// 12 KiB of them); a longer line ends the watch and the Pod is read afresh (a GET's answer may be
// up to limits::k_max_engine_response_bytes).
inline constexpr std::size_t k_max_pod_watch_line_bytes = 1024 * 1024;

// Waits `interval` on the awaiting coroutine's executor (the launch's attach retries use it too).
net::awaitable<void> pause(Timeout interval);

class PodEndWait final : public engine::BoxEnd {
public:
    using ClientSource = std::function<Expected<KubeClient*>()>;
    // One read of the Pod (GET), its UID checked: "engine_no_such_object" for another Pod's.
    using ReadPod = std::function<net::awaitable<Expected<boost::json::value>>(Timeout timeout)>;
    using OnEnd = std::function<void(boost::json::value pod)>;

    // `pods_path` is the namespace's ".../namespaces/NS/pods".
    PodEndWait(ClientSource client, ReadPod read_pod, std::string pods_path, PodRef ref, OnEnd on_end);

    net::awaitable<Expected<void>> ended(Timeout timeout) override;
    void cancel() override;

private:
    // Why a watch ended without the box's end.
    enum class WatchClosed {
        reopen,   // it closed: open it again from the last version seen
        reread,   // 410 Gone, an ERROR event or an unreadable one: read the Pod afresh
        refused,  // the apiserver will not watch it (403, 405): read it every k_pod_poll_interval
    };
    using WatchOutcome = std::variant<Expected<void>, WatchClosed>;

    // Watches the Pod from `version` (updated with every version seen) until the watch closes,
    // the box ends (Expected<void>{}) or an Error ends the wait.
    net::awaitable<WatchOutcome> follow(KubeClient& client, std::string& version,
                                        std::chrono::steady_clock::time_point deadline);
    // A version of the Pod: whether it ended the wait, with success or an Error; nullopt: not yet.
    std::optional<Expected<void>> take(boost::json::value pod, bool deleted);
    std::string watch_path(const std::string& version, std::chrono::seconds timeout) const;

    ClientSource m_client;
    ReadPod m_read_pod;
    std::string m_pods_path;
    PodRef m_ref;
    OnEnd m_on_end;
    bool m_cancelled = false;
    KubeLineStream* m_open = nullptr;  // the watch being read, for cancel()
};

}  // namespace pybox::kube
