// EnginePoolControl: `pybox vm start | stop | status` for a pool of engines (engine_pool.hpp).
//
// The local engine (the private one, or "engine_socket") comes first and is handled exactly as
// without a pool: start() starts and checks it, and its failure is the answer's error; stop()
// stops only it. The other engines are not PyBox's to start or stop: each is checked by its own
// EngineControl, its backend's (for a Docker engine a vm::PrivateEngine fronting that engine's
// socket, so the checks are the same), after its backend received the images recorded in
// images.json from the local engine, which builds them (EngineBackend::receive_images). Their outcome goes into the pool (what runs may use) and into the
// answer's `engines`; one that fails its checks does not fail start(), it is skipped by runs
// and its problems say why. The answer's other keys describe the local engine, as before.
//
// The daemon also checks again, every interval (recheck_forever: the sweep interval), each
// engine that is not verified (lost by a run, or failing a check), with the same status check,
// so an engine that comes back takes runs again without `pybox vm start | status`. Such a
// re-check's outcome is dropped when another check of that engine began or was recorded while it
// ran (a start, stop or status knows better).
//
// Ownership: borrows the pool, the controls and backends (index i is the pool's engine i) and
// the image builder, which must outlive it. Runs on the daemon's io_context; the copies run there too (the engine
// calls are asynchronous).
#pragma once

#include "daemon/engine/engine_backend.hpp"
#include "daemon/pool/engine_pool.hpp"
#include "daemon/server/services.hpp"
#include "daemon/vm/private_engine.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace pybox::daemon {

struct PoolEngineHandles {
    EngineControl* control = nullptr;
    engine::EngineBackend* backend = nullptr;
};

class EnginePoolControl final : public EngineControl {
public:
    // `engines[0]` is the local engine; `image_builder` is its Docker engine, which builds the
    // images the others receive. `work_dir` holds image files while they are passed on.
    EnginePoolControl(EnginePool& pool, std::vector<PoolEngineHandles> engines, engine::EngineClient* image_builder,
                      vm::RecordedImagesSource images, std::filesystem::path work_dir);

    net::awaitable<Expected<proto::EngineStartAnswer>> start() override;
    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override;
    net::awaitable<proto::EngineStatus> status() override;

    // Copies the recorded images to every other engine and checks each again (after a setup
    // or an image build).
    net::awaitable<void> copy_images_everywhere();
    // Removes an image from every other engine (after `pybox image rm`); errors are logged.
    net::awaitable<void> remove_image_everywhere(std::string image_id);

    // Checks again every engine that is not verified now; an engine verified again is logged.
    net::awaitable<void> recheck_unverified();
    // recheck_unverified() after every `interval`, until cancelled or the io_context stops.
    net::awaitable<void> recheck_forever(std::chrono::seconds interval);

private:
    // Checks of engine `index`: begin_check() when one begins; record() files its outcome and
    // counts as news to the re-checks begun before it.
    std::uint64_t begin_check(std::size_t index) { return ++m_check_events.at(index); }
    void record(std::size_t index, const proto::EngineStatus& status);

    // Checks engine `index` (> 0), first bringing the images to it when `copy` says so.
    net::awaitable<void> check_other(std::size_t index, bool copy);

    EnginePool& m_pool;
    std::vector<PoolEngineHandles> m_engines;
    engine::EngineClient* m_image_builder;
    vm::RecordedImagesSource m_images;
    std::filesystem::path m_work_dir;
    std::vector<std::uint64_t> m_check_events;  // per engine: checks begun and recorded
};

// The ImageService of a pool: the local engine's (which builds), then the images copied to (or
// removed from) the other engines.
class PoolImageService final : public ImageService {
public:
    PoolImageService(ImageService& local, EnginePoolControl& pool) : m_local(local), m_pool(pool) {}

    net::awaitable<Expected<proto::SetupAnswer>> setup(std::vector<std::string> images, bool refresh_lock) override;
    net::awaitable<Expected<proto::ImageList>> list() override { return m_local.list(); }
    net::awaitable<Expected<proto::SetupAnswer>> build_own(std::string name, std::string recipe) override;
    net::awaitable<Expected<proto::ImageList>> remove_own(std::string name) override;
    proto::SetupProgress progress() override { return m_local.progress(); }

private:
    // After a setup or build: the images it replaced leave the other engines, the new ones reach them.
    net::awaitable<void> follow(const proto::SetupAnswer& answer);

    ImageService& m_local;
    EnginePoolControl& m_pool;
};

}  // namespace pybox::daemon
