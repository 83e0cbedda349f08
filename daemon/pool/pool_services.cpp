#include "daemon/pool/pool_services.hpp"

#include <vector>

namespace pybox::daemon {

namespace {

std::vector<EnginePool::Member> pool_members(const std::list<PoolMember>& members)
{
    std::vector<EnginePool::Member> described;
    for (const auto& member : members) described.push_back({member.id(), member.address(), member.takes_runs(), member.max_runs()});
    return described;
}

std::vector<EngineRunService*> run_services(std::list<PoolMember>& members)
{
    std::vector<EngineRunService*> runs;
    for (auto& member : members) runs.push_back(&member.runs());
    return runs;
}

std::vector<PoolEngineHandles> engine_handles(std::list<PoolMember>& members)
{
    std::vector<PoolEngineHandles> handles;
    for (auto& member : members) handles.push_back({&member.control(), &member.backend()});
    return handles;
}

}  // namespace

PoolServices::PoolServices(std::list<PoolMember>& members, ImageService& local_images,
                           const images::ImageRegistry& registry, std::filesystem::path work_dir)
    : m_pool(pool_members(members)),
      m_runs(m_pool, run_services(members)),
      m_control(m_pool, engine_handles(members), &members.front().local_docker().client(), recorded_images(registry),
                std::move(work_dir)),
      m_images(local_images, m_control)
{
}

}  // namespace pybox::daemon
