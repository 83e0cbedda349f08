#include "daemon/kube/kube_engine_probe.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/kube/cluster_checks.hpp"

namespace pybox::kube {

net::awaitable<Expected<void>> KubeEngineProbe::prepare(engine::Timeout timeout)
{
    if (m_answered) co_return Expected<void>{};
    co_return co_await answers(timeout);
}

net::awaitable<Expected<void>> KubeEngineProbe::answers(engine::Timeout timeout)
{
    auto client = m_client();
    if (!client) co_return client.error();
    auto answer = co_await (*client)->call_json(http::verb::get, "/version", nullptr, timeout);
    if (!answer) co_return answer.error();
    auto version = parse_server_version(*answer);
    if (!version) co_return version.error();
    m_answered = true;
    co_return Expected<void>{};
}

net::awaitable<Expected<proto::ClockOffset>> KubeEngineProbe::clock_offset(engine::Timeout)
{
    co_return make_error(api_error::k_clock_unmeasured,
                         "the cluster reports no clock finer than a second (the apiserver's answers and a Pod's "
                         "container status give times to the second only), so its offset from the daemon's clock "
                         "is not measured");
}

proto::EngineClockNames KubeEngineProbe::clock_names() const
{
    return {"the cluster's wall clock (the container status's startedAt, finishedAt), to the second; its offset "
            "from the daemon's clock is not measured",
            "the cluster's wall clock (finishedAt - startedAt), to the second"};
}

net::awaitable<Expected<engine::CgroupFacts>> KubeEngineProbe::cgroup_facts(engine::Timeout)
{
    co_return make_error(api_error::k_cgroup_unknown, "a cluster's boxes are not watched (PyBox has no agent on the nodes)");
}

}  // namespace pybox::kube
