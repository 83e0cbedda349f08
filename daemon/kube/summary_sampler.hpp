// SummarySampler: reads the kubelet's summary of a running box's node (kubelet_summary.hpp)
// through the apiserver's node proxy, at once and then every k_summary_interval, keeping what the
// reads found of the box's container (kubelet_resources.hpp's SummaryReads), until stop().
//
// It never slows or fails the run: it runs beside it, detached on the executor it is started on;
// a read that fails (no client, the apiserver or the kubelet refusing, a timeout of
// k_summary_read_timeout, a malformed or oversized summary) is counted and its words kept, never
// raised, and the next read is made as usual. One read at a time. stop() freezes what was found:
// an answer that comes after it is dropped, and no read begins after it.
//
// Ownership: shared by its owner and its own loop, so a read in flight may end after the owner
// let it go. The client source (and the client it gives) must outlive the loop: at most one read's
// timeout after stop(). All calls on the executor's thread; not thread-safe.
#pragma once

#include "common/error.hpp"
#include "daemon/kube/kube_client.hpp"
#include "daemon/kube/kubelet_resources.hpp"
#include "daemon/kube/kubelet_summary.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace pybox::kube {

// How often a running box's node's summary is read: well within the kubelet's refresh of a
// container's figures (10-15 s), so that the last sample before the end is seen.
inline constexpr std::chrono::milliseconds k_summary_interval{1'000};
// The budget of one read.
inline constexpr std::chrono::milliseconds k_summary_read_timeout{5'000};

class SummarySampler : public std::enable_shared_from_this<SummarySampler> {
public:
    using ClientSource = std::function<Expected<KubeClient*>()>;

    // Starts reading the summary of `node` for the container `container` of `pod`.
    static std::shared_ptr<SummarySampler> start(net::any_io_executor executor, ClientSource client, SummaryPod pod,
                                                 std::string container, std::string node);
    SummarySampler(const SummarySampler&) = delete;
    SummarySampler& operator=(const SummarySampler&) = delete;

    void stop();
    const SummaryReads& reads() const { return m_reads; }

private:
    SummarySampler(net::any_io_executor executor, ClientSource client, SummaryPod pod, std::string container,
                   std::string node);
    net::awaitable<void> run();
    net::awaitable<Expected<std::optional<ContainerStats>>> read_once();

    ClientSource m_client;
    SummaryPod m_pod;
    std::string m_container;
    net::steady_timer m_timer;
    SummaryReads m_reads;
    bool m_stopped = false;
};

}  // namespace pybox::kube
