#include "daemon/kube/summary_sampler.hpp"

#include "daemon/kube/kube_limits.hpp"
#include "daemon/kube/kube_status.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

namespace pybox::kube {

std::shared_ptr<SummarySampler> SummarySampler::start(net::any_io_executor executor, ClientSource client,
                                                      SummaryPod pod, std::string container, std::string node)
{
    std::shared_ptr<SummarySampler> sampler(
        new SummarySampler(executor, std::move(client), std::move(pod), std::move(container), std::move(node)));
    net::co_spawn(executor, [sampler]() { return sampler->run(); }, net::detached);
    return sampler;
}

SummarySampler::SummarySampler(net::any_io_executor executor, ClientSource client, SummaryPod pod,
                               std::string container, std::string node)
    : m_client(std::move(client)), m_pod(std::move(pod)), m_container(std::move(container)), m_timer(executor)
{
    m_reads.node = std::move(node);
}

void SummarySampler::stop()
{
    m_stopped = true;
    m_timer.cancel();
}

net::awaitable<void> SummarySampler::run()
{
    // The loop holds the sampler while it runs.
    const auto self = shared_from_this();
    while (!m_stopped) {
        auto read = co_await read_once();
        if (m_stopped) break;
        m_reads.add(read);
        m_timer.expires_after(k_summary_interval);
        co_await m_timer.async_wait(net::as_tuple(net::use_awaitable));
    }
}

net::awaitable<Expected<std::optional<ContainerStats>>> SummarySampler::read_once()
{
    auto client = m_client();
    if (!client) co_return client.error();
    auto reply = co_await (*client)->call(http::verb::get, summary_path(m_reads.node), nullptr, k_summary_read_timeout,
                                          k_max_kubelet_summary_bytes);
    if (!reply) co_return reply.error();
    if (reply->status / 100 != 2) co_return status_error(reply->what, reply->status, reply->body);
    co_return container_stats(reply->body, m_pod, m_container);
}

}  // namespace pybox::kube
