// KubeBackend: the EngineBackend (daemon/engine/engine_backend.hpp) of a config.json "engines"
// entry of kind "kubernetes" (docs/kubernetes.md):
// - its client is made from the entry's kubeconfig and context (kubeconfig.hpp, kube_client.hpp)
//   when first needed, and again at each need while it cannot be (a kubeconfig fixed later is
//   taken without a restart); until then every call fails with that kubeconfig's Error;
// - its boxes are Pods in the entry's namespace (kube_box_engine.hpp), its probe the apiserver's
//   /version (kube_engine_probe.hpp);
// - its images are the recorded ones pushed to the entry's "image_registry" (OCI distribution
//   API, daemon/registry/image_push.hpp) by receive_images() (`pybox vm start`, setup, image
//   build), each recorded with its manifest digest (pushed_images.hpp) so that Pods name it by
//   digest; an image is present on the cluster when that record names its image id;
// - its checks (`vm status`) are the kubeconfig, the apiserver's version, the namespace, every
//   permission the backend uses (cluster_probe.hpp) and the images; a cluster is never started
//   or stopped by PyBox;
// - it keeps no warm boxes (a Pod's settings are read back when it is made, but a Pod waiting
//   for a program holds its node's CPU and memory requests).
// Not copyable or movable (the box engine and the checks hold it). Same executor and thread
// rules as the other backends.
#pragma once

#include "daemon/engine/engine_backend.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/kube/kube_box_engine.hpp"
#include "daemon/kube/kube_client.hpp"
#include "daemon/kube/kube_engine_probe.hpp"
#include "daemon/registry/pushed_images.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace pybox::kube {

class KubeBackend final : public engine::EngineBackend {
public:
    // `images_file`: where the record of the images pushed for this entry is kept.
    KubeBackend(std::string id, engine::KubeEngine entry, std::filesystem::path images_file,
                vm::RecordedImagesSource recorded_images);
    ~KubeBackend() override;
    KubeBackend(const KubeBackend&) = delete;
    KubeBackend& operator=(const KubeBackend&) = delete;

    std::string describe() const override;
    engine::BoxEngine& boxes() override { return m_boxes; }
    engine::EngineProbe& probe() override { return m_probe; }
    daemon::EngineControl& control() override { return *m_control; }
    net::awaitable<Expected<images::EngineImageState>> image_state(const images::ImageRecord& record) override;
    net::awaitable<std::vector<std::string>> receive_images(engine::EngineClient& builder,
                                                            std::vector<vm::RecordedImage> images,
                                                            std::filesystem::path work_dir) override;
    net::awaitable<Expected<void>> remove_image(const std::string& image_id) override;
    bool keeps_warm_boxes() const override { return false; }

    // The client over the entry's kubeconfig, or why there is none.
    Expected<KubeClient*> client();
    const engine::KubeEngine& entry() const { return m_entry; }
    // The pushed image of an engine image id, when this entry's record has it.
    std::optional<ClusterImage> cluster_image(std::string_view image_id) const;
    // The recorded images (the daemon's image registry), or why they cannot be read.
    Expected<std::vector<vm::RecordedImage>> recorded_images() const { return m_recorded_images(); }

private:
    std::string m_id;
    engine::KubeEngine m_entry;
    std::filesystem::path m_images_file;
    vm::RecordedImagesSource m_recorded_images;
    std::unique_ptr<KubeClient> m_client;
    KubeBoxEngine m_boxes;
    KubeEngineProbe m_probe;
    std::unique_ptr<daemon::EngineControl> m_control;
};

}  // namespace pybox::kube
