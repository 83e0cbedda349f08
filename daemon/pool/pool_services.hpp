// PoolServices: the services of a pool of engines (config.json "engines"), made together over
// its members (pool_member.hpp, the local engine first): the EnginePool that chooses each run's
// engine, the PooledRunService that sends it there, the pool's `pybox vm start | stop | status`
// (EnginePoolControl) and the PoolImageService that copies the local engine's images to the
// others. Without entries the daemon makes none of this and serves the local engine directly.
//
// Ownership: borrows the members and the local ImageService, which must outlive it. Not
// copyable or movable (the services hold references to each other). Runs on the daemon's
// io_context.
#pragma once

#include "daemon/images/image_registry.hpp"
#include "daemon/pool/engine_pool.hpp"
#include "daemon/pool/pool_control.hpp"
#include "daemon/pool/pool_member.hpp"
#include "daemon/pool/pooled_run_service.hpp"

#include <filesystem>
#include <list>

namespace pybox::daemon {

class PoolServices {
public:
    // `work_dir` holds image tars while they are copied.
    PoolServices(std::list<PoolMember>& members, ImageService& local_images, const images::ImageRegistry& registry,
                 std::filesystem::path work_dir);
    PoolServices(const PoolServices&) = delete;
    PoolServices& operator=(const PoolServices&) = delete;

    const EnginePool& pool() const { return m_pool; }
    EngineRunService& runs() { return m_runs; }
    EnginePoolControl& control() { return m_control; }
    ImageService& images() { return m_images; }

private:
    EnginePool m_pool;
    PooledRunService m_runs;
    EnginePoolControl m_control;
    PoolImageService m_images;
};

}  // namespace pybox::daemon
