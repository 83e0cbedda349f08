#include "daemon/kube/kube_backend.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/limits.hpp"
#include "daemon/kube/cluster_probe.hpp"
#include "daemon/registry/image_push.hpp"
#include "daemon/registry/pinned_reference.hpp"

#include <utility>

namespace pybox::kube {

namespace {

// "kubernetes https://HOST:PORT namespace NS", or the kubeconfig's path when it could not be read.
std::string describe_cluster(const engine::KubeEngine& entry, const Expected<KubeAccess>& access)
{
    const std::string where = access ? access->server.url : "(kubeconfig " + entry.kubeconfig.string() + ")";
    return "kubernetes " + where + " namespace " + entry.namespace_name;
}

// `vm status` of a cluster: its checks, never a start or a stop.
class KubeControl final : public daemon::EngineControl {
public:
    explicit KubeControl(KubeBackend& backend) : m_backend(backend) {}

    net::awaitable<Expected<proto::EngineStartAnswer>> start() override
    {
        proto::EngineStartAnswer answer;
        static_cast<proto::EngineStatus&>(answer) = co_await status();
        co_return answer;
    }

    net::awaitable<Expected<proto::EngineStopAnswer>> stop() override
    {
        co_return make_error(api_error::k_engine_not_managed,
                             "PyBox does not stop a cluster (" + m_backend.describe() + ")");
    }

    net::awaitable<proto::EngineStatus> status() override
    {
        proto::EngineStatus status;
        status.engine_socket = m_backend.describe();
        m_backend.forget_missing_profiles();
        auto client = m_backend.client();
        if (!client) {
            status.problems.push_back({"kubeconfig", client.error().message});
            co_return status;
        }
        auto report = co_await check_cluster(**client, m_backend.entry().namespace_name, limits::k_query_timeout);
        if (report.version) {
            status.running = true;
            status.api_version = report.version->git_version;
        }
        for (auto& problem : report.problems) status.problems.push_back({problem.check, std::move(problem.message)});
        if (status.running) add_image_problems(status);
        status.verified = status.running && status.problems.empty();
        co_return status;
    }

private:
    void add_image_problems(proto::EngineStatus& status) const
    {
        auto recorded = m_backend.recorded_images();
        if (!recorded) {
            status.problems.push_back({"images", recorded.error().message});
            return;
        }
        for (const auto& image : *recorded)
            if (!m_backend.cluster_image(image.image_id))
                status.problems.push_back({"images", "the image " + image.name + " (" + image.image_id +
                                                         ") is not in the cluster's registry " +
                                                         m_backend.entry().image_registry +
                                                         " yet: `pybox vm start` pushes it"});
    }

    KubeBackend& m_backend;
};

}  // namespace

KubeBackend::KubeBackend(std::string id, engine::KubeEngine entry, std::filesystem::path images_file,
                         vm::RecordedImagesSource recorded_images)
    : m_id(std::move(id)), m_entry(std::move(entry)), m_access(read_kubeconfig(m_entry.kubeconfig, m_entry.context)),
      m_images_file(std::move(images_file)), m_recorded_images(std::move(recorded_images)),
      m_boxes([this] { return client(); }, [this](std::string_view image_id) { return cluster_image(image_id); },
              KubeBoxSettings{m_entry.namespace_name, describe_cluster(m_entry, m_access), m_entry.node.value_or(""),
                              m_entry.pids_limit_node}),
      m_probe([this] { return client(); }), m_control(std::make_unique<KubeControl>(*this))
{
}

KubeBackend::~KubeBackend() = default;

std::string KubeBackend::describe() const
{
    return m_boxes.describe();
}

Expected<KubeClient*> KubeBackend::client()
{
    if (m_client) return m_client.get();
    if (!m_access) m_access = read_kubeconfig(m_entry.kubeconfig, m_entry.context);
    if (!m_access) return m_access.error();
    auto made = KubeClient::make(std::move(*m_access));
    if (!made) {
        m_access = made.error();  // read again at the next need: the files it names may be fixed
        return made.error();
    }
    m_client = std::move(*made);
    return m_client.get();
}

Expected<registry::PushedImages*> KubeBackend::pushed_images()
{
    if (!m_pushed) {
        auto loaded = registry::PushedImages::load(m_images_file);
        if (!loaded) return loaded.error();
        m_pushed.emplace(std::move(*loaded));
    }
    return &*m_pushed;
}

std::optional<ClusterImage> KubeBackend::cluster_image(std::string_view image_id)
{
    auto pushed = pushed_images();
    if (!pushed) return std::nullopt;
    const auto record = (*pushed)->find(image_id);
    // A record of another registry (the entry's changed since) does not name an image this
    // cluster's nodes are told to pull from.
    if (!record || !record->reference.starts_with(m_entry.image_registry + "/")) return std::nullopt;
    return ClusterImage{record->reference, record->manifest_digest};
}

net::awaitable<Expected<images::EngineImageState>> KubeBackend::image_state(const images::ImageRecord& record)
{
    co_return cluster_image(record.image_id) ? images::EngineImageState::present : images::EngineImageState::missing;
}

net::awaitable<std::vector<std::string>> KubeBackend::receive_images(engine::EngineClient& builder,
                                                                     std::vector<vm::RecordedImage> images,
                                                                     std::filesystem::path work_dir)
{
    std::vector<std::string> notes;
    auto address = registry::parse_registry_address(m_entry.image_registry);
    auto pushed = pushed_images();
    if (!address || !pushed) {
        notes.push_back("no image was pushed: " + (address ? pushed.error() : address.error()).message);
        co_return notes;
    }
    for (const auto& image : images) {
        if (cluster_image(image.image_id)) continue;
        auto result = co_await registry::push_image(builder, *address, image.name, image.image_id, work_dir);
        if (!result) {
            notes.push_back("the image " + image.name + " could not be pushed to " + m_entry.image_registry + ": " +
                            result.error().message);
            continue;
        }
        registry::PushedRecord record{image.name, image.image_id, result->reference.text(), result->reference.digest,
                            rfc3339_utc(WallClock::now())};
        if (auto kept = (*pushed)->put(record); !kept) {
            notes.push_back("the image " + image.name + " was pushed as " + record.reference +
                            " but the record of it could not be written: " + kept.error().message);
            continue;
        }
        notes.push_back("pushed the image " + image.name + " as " + record.reference + " (" +
                        std::to_string(result->blobs_uploaded) + " blobs, " + std::to_string(result->bytes_uploaded) +
                        " bytes uploaded; " + std::to_string(result->blobs_present) + " already there)");
    }
    co_return notes;
}

net::awaitable<Expected<void>> KubeBackend::remove_image(const std::string& image_id)
{
    auto pushed = pushed_images();
    if (!pushed) co_return pushed.error();
    co_return (*pushed)->forget(image_id);
}

}  // namespace pybox::kube
