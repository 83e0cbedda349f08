// EngineBackend: one engine as the pool, the runs and the checks use it, whatever drives it:
// its boxes (box_engine.hpp: what run/ and the sweep drive), what the runs ask of the engine
// itself (engine_probe.hpp), its `pybox vm start | stop |
// status` checks, whether it holds a recorded image under the recorded id (the engine's half of
// the check before every run), how the recorded images reach it, and whether it may keep warm
// boxes. Nothing above daemon/engine/ asks what kind of engine it is: backend_factory.hpp makes
// each backend from its config.json entry's "kind" (docs/architecture.md, "Adding a backend").
//
// DockerBackend (docker_backend.hpp) is the backend of a Docker engine. Implementations run
// their calls as coroutines on the executor of whoever built them and are not thread-safe.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/engine/engine_probe.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/server/services.hpp"
#include "daemon/vm/private_engine.hpp"

#include <boost/asio/awaitable.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace pybox::engine {

class EngineClient;

class EngineBackend {
public:
    virtual ~EngineBackend() = default;

    // The engine's address for messages, the status answer and receipts; never a secret.
    virtual std::string describe() const = 0;
    virtual BoxEngine& boxes() = 0;
    // What the runs ask of the engine itself: readiness, whether it answers, its clock, its cgroups.
    virtual EngineProbe& probe() = 0;
    // The engine's `pybox vm start | stop | status`: its checks, which the pool's verdict on it
    // rests on (and, for the local engine, its start and stop).
    virtual daemon::EngineControl& control() = 0;
    // Whether the engine holds `record`'s image under the recorded id; an engine that cannot be
    // asked is an error (the engine's code: "engine_unreachable", ...).
    virtual net::awaitable<Expected<images::EngineImageState>> image_state(const images::ImageRecord& record) = 0;
    // Brings `images` to this engine from `builder`, the Docker engine that built them (the
    // local one), using `work_dir` for files in between. One note per image brought or failed;
    // failures are notes, not errors: the engine's checks then say which image it lacks.
    virtual net::awaitable<std::vector<std::string>> receive_images(EngineClient& builder,
                                                                    std::vector<vm::RecordedImage> images,
                                                                    std::filesystem::path work_dir) = 0;
    // Removes an image this engine was given (after `pybox image rm`, or a rebuild replaced it).
    virtual net::awaitable<Expected<void>> remove_image(const std::string& image_id) = 0;
    // Whether boxes may be made here ahead of their runs (run/warm_box_keeper.hpp): a box made
    // now must still be exactly as specified when a run takes it.
    virtual bool keeps_warm_boxes() const = 0;
};

}  // namespace pybox::engine
