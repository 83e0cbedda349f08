// KubeEngineProbe: the EngineProbe (daemon/engine/engine_probe.hpp) of a Kubernetes cluster.
// prepare() asks the apiserver's /version until it has answered once; answers() asks it every
// time. The cluster's clock is not measured: the apiserver's answers carry no time finer than a
// second (the Date header) and a Pod's container status gives its times to the second, so
// clock_offset() says so without a call, and clock_names() says the times are the cluster's, to
// the second. Its boxes are not watched (PyBox has no agent on the
// nodes), so cgroup_facts() says that, without a call.
//
// The client comes from the backend at every call (a kubeconfig that cannot be used is that
// call's Error). Runs its calls as coroutines on the executor of whoever awaits them; not
// thread-safe.
#pragma once

#include "daemon/engine/engine_probe.hpp"
#include "daemon/kube/kube_client.hpp"

#include <functional>
#include <utility>

namespace pybox::kube {

class KubeEngineProbe final : public engine::EngineProbe {
public:
    using ClientSource = std::function<Expected<KubeClient*>()>;

    explicit KubeEngineProbe(ClientSource client) : m_client(std::move(client)) {}

    net::awaitable<Expected<void>> prepare(engine::Timeout timeout) override;
    net::awaitable<Expected<void>> answers(engine::Timeout timeout) override;
    net::awaitable<Expected<proto::ClockOffset>> clock_offset(engine::Timeout timeout) override;
    proto::EngineClockNames clock_names() const override;
    net::awaitable<Expected<engine::CgroupFacts>> cgroup_facts(engine::Timeout timeout) override;

private:
    ClientSource m_client;
    bool m_answered = false;
};

}  // namespace pybox::kube
