#include "daemon/registry/image_push.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/registry/image_manifest.hpp"
#include "daemon/registry/registry_client.hpp"
#include "daemon/registry/save_tar.hpp"

#include <boost/asio/this_coro.hpp>

#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

namespace pybox::registry {

namespace {

// Removes the export's tar when the push ends, however it ends.
class TarFile {
public:
    explicit TarFile(std::filesystem::path path) : m_path(std::move(path)) {}
    ~TarFile()
    {
        std::error_code ec;
        std::filesystem::remove(m_path, ec);
    }
    TarFile(const TarFile&) = delete;
    TarFile& operator=(const TarFile&) = delete;
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

}  // namespace

boost::asio::awaitable<Expected<PushedImage>> push_image(engine::EngineClient& engine, const RegistryAddress& address,
                                                         std::string_view name, std::string_view image_id,
                                                         const std::filesystem::path& work_dir)
{
    // Checks the name (and so the repository) before anything is exported.
    auto named = reference_in(address, name, image_id);
    if (!named) co_return named.error();
    const std::string repository = named->repository;
    auto registry = RegistryClient::make(co_await boost::asio::this_coro::executor, address.host);
    if (!registry) co_return registry.error();

    std::error_code ec;
    std::filesystem::create_directories(work_dir, ec);
    if (ec)
        co_return make_error(api_error::k_file_unwritable, "Cannot make " + work_dir.string() + ": " + ec.message() + ".");
    const TarFile tar(work_dir / ("push-" + std::string(image_id.substr(image_id.find(':') + 1, 12)) + ".tar"));
    auto exported = co_await engine.export_image(image_id, tar.path(), k_max_push_tar_bytes, k_push_timeout);
    if (!exported) co_return exported.error();

    std::ifstream in(tar.path(), std::ios::binary);
    const auto size = std::filesystem::file_size(tar.path(), ec);
    if (!in || ec)
        co_return make_error(api_error::k_io_error, "Cannot read the image export " + tar.path().string() + ".");
    auto saved = read_saved_image(in, size);
    if (!saved) co_return saved.error();
    if (saved->config_digest != image_id)
        co_return make_error(api_error::k_image_save_invalid, "The engine exported image " + saved->config_digest +
                                                                  " when asked for " + std::string(image_id) + ".");

    PushedImage pushed;
    pushed.image_id = saved->config_digest;
    const Blob config{saved->config_digest, saved->config.size()};
    std::vector<Blob> layers;
    for (const auto& layer : saved->layers) layers.push_back(Blob{layer.diff_id, layer.size});

    // Sends one blob unless the repository holds it already.
    auto send = [&](const Blob& blob, std::istream& from, std::uint64_t offset) -> boost::asio::awaitable<Expected<void>> {
        auto present = co_await (*registry)->blob_size(repository, blob.digest, k_push_timeout);
        if (!present) co_return present.error();
        if (*present) {
            if (**present != blob.size)
                co_return make_error(api_error::k_registry_protocol,
                                     "The registry holds " + blob.digest + " with " + std::to_string(**present) +
                                         " bytes, not " + std::to_string(blob.size) + ".");
            ++pushed.blobs_present;
            co_return Expected<void>{};
        }
        auto uploaded = co_await (*registry)->upload_blob(repository, blob, from, offset, k_push_timeout);
        if (!uploaded) co_return uploaded.error();
        ++pushed.blobs_uploaded;
        pushed.bytes_uploaded += blob.size;
        co_return Expected<void>{};
    };
    std::istringstream config_bytes(saved->config);
    if (auto sent = co_await send(config, config_bytes, 0); !sent) co_return sent.error();
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (auto sent = co_await send(layers[i], in, saved->layers[i].offset); !sent) co_return sent.error();
    }

    const ImageManifest manifest = build_image_manifest(config, layers);
    if (auto put = co_await (*registry)->put_manifest(repository, manifest, k_push_timeout); !put) co_return put.error();
    auto reference = reference_in(address, name, manifest.digest);
    if (!reference) co_return reference.error();
    pushed.reference = std::move(*reference);
    co_return pushed;
}

}  // namespace pybox::registry
