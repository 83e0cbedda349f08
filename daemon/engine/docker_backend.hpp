// DockerBackend: the EngineBackend of a Docker engine (the local one, and config.json's
// "engines" entries of kind "docker"): its own EngineClient over the dialer it is given, the
// DockerBoxEngine and the DockerEngineProbe over that client, and the engine's checks, made
// over the same client (so the ping of every check negotiates the Engine API version the boxes
// then use). A recorded image
// is present when the engine's image under the recorded ID has that ID; images reach it as a
// tar exported from the engine that built them and loaded here (docker_image_copy.hpp). It
// keeps warm boxes: a created box keeps its settings until it is started.
//
// client() is for what is Docker's by nature and nobody else's: the images' build and import
// (images/image_service.hpp) and the doctor's look at the local engine's /info and boxes.
// Not copyable or movable (the box engine, the probe and the checks hold the client). Same executor and
// thread rules as the EngineClient.
#pragma once

#include "daemon/engine/docker_box_engine.hpp"
#include "daemon/engine/docker_engine_probe.hpp"
#include "daemon/engine/engine_backend.hpp"
#include "daemon/engine/engine_client.hpp"

#include <functional>
#include <memory>
#include <string>

namespace pybox::engine {

class DockerBackend final : public EngineBackend {
public:
    // Makes the engine's checks over the backend's client (which outlives them).
    using ControlMaker = std::function<std::unique_ptr<daemon::EngineControl>(EngineClient&)>;

    // `runtime`: the OCI runtime of its boxes (config.json's "runtime").
    DockerBackend(net::any_io_executor executor, std::unique_ptr<EngineDialer> dialer, const ControlMaker& make_control,
                  std::string runtime);
    DockerBackend(const DockerBackend&) = delete;
    DockerBackend& operator=(const DockerBackend&) = delete;

    EngineClient& client() { return m_client; }

    std::string describe() const override { return m_client.dialer().describe(); }
    BoxEngine& boxes() override { return m_boxes; }
    EngineProbe& probe() override { return m_probe; }
    daemon::EngineControl& control() override { return *m_control; }
    net::awaitable<Expected<images::EngineImageState>> image_state(const images::ImageRecord& record) override;
    net::awaitable<std::vector<std::string>> receive_images(EngineClient& builder, std::vector<vm::RecordedImage> images,
                                                            std::filesystem::path work_dir) override;
    net::awaitable<Expected<void>> remove_image(const std::string& image_id) override;
    bool keeps_warm_boxes() const override { return true; }

private:
    EngineClient m_client;
    DockerBoxEngine m_boxes;
    DockerEngineProbe m_probe;
    std::unique_ptr<daemon::EngineControl> m_control;
};

}  // namespace pybox::engine
