// KubeBackend: the EngineBackend (daemon/engine/engine_backend.hpp) of a config.json "engines"
// entry of kind "kubernetes" (docs/kubernetes.md):
// - its kubeconfig and context (kubeconfig.hpp) are read once, when the backend is made: the
//   server's URL names the cluster in describe(), and the client (kube_client.hpp) is made of
//   what was read when first needed. While the kubeconfig cannot be read, or what was read
//   cannot make a client, it is read again at each need (a kubeconfig fixed later is taken
//   without a restart; describe() keeps naming the file then); until then every call fails with
//   that kubeconfig's Error;
// - its boxes are Pods in the entry's namespace (kube_box_engine.hpp), its probe the apiserver's
//   /version (kube_engine_probe.hpp);
// - its images are the recorded ones pushed to the entry's "image_registry" (OCI distribution
//   API, daemon/registry/image_push.hpp) by receive_images() (`pybox vm start`, setup, image
//   build), each recorded with its manifest digest (pushed_images.hpp) so that Pods name it by
//   digest; an image is present on the cluster when that record names its image id in the
//   entry's current image_registry. The record is loaded when first needed and kept: the
//   backend is its one writer (receive_images, remove_image change it in place); while it
//   cannot be loaded, it is loaded again at each need;
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
#include "daemon/kube/kubeconfig.hpp"
#include "daemon/kube/kube_engine_probe.hpp"
#include "daemon/registry/pushed_images.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace pybox::kube {

// Why a cluster's boxes are not watched, as the receipt says it (unknown.resources,
// unknown.program_end): no PyBox agent runs on its nodes.
inline constexpr std::string_view k_pods_unwatched =
    "the box is a Pod on a cluster's node, where no PyBox agent reads the kernel's counters or its record of "
    "process ends";

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
    // At each check (`vm status`): the nodes seen without PyBox's seccomp profile are looked at
    // again by their next Pod (kube_box_engine.hpp).
    void forget_missing_profiles() { m_boxes.forget_missing_profiles(); }
    const engine::KubeEngine& entry() const { return m_entry; }
    // The pushed image of an engine image id, when this entry's record has it.
    std::optional<ClusterImage> cluster_image(std::string_view image_id);
    // The recorded images (the daemon's image registry), or why they cannot be read.
    Expected<std::vector<vm::RecordedImage>> recorded_images() const { return m_recorded_images(); }

private:
    // The kept record of the pushed images, or why it cannot be loaded.
    Expected<registry::PushedImages*> pushed_images();

    std::string m_id;
    engine::KubeEngine m_entry;
    // The kubeconfig as last read, until a client is made of it.
    Expected<KubeAccess> m_access;
    std::filesystem::path m_images_file;
    std::optional<registry::PushedImages> m_pushed;  // once loaded
    vm::RecordedImagesSource m_recorded_images;
    std::unique_ptr<KubeClient> m_client;
    KubeBoxEngine m_boxes;
    KubeEngineProbe m_probe;
    std::unique_ptr<daemon::EngineControl> m_control;
};

}  // namespace pybox::kube
