// Pushes one image of an engine to a registry, named by its manifest's digest: the engine's
// export of the image (GET /images/{id}/get) into a tar under `work_dir`, read strictly
// (save_tar.hpp), then each blob the repository lacks uploaded from that file (the config,
// then the layers, streamed; a blob the repository holds, with the same size, is not sent
// again), then the manifest (image_manifest.hpp) PUT under the digest PyBox computed, which
// the registry must answer with. The result names the image as
// REGISTRY/PREFIX/NAME@sha256:MANIFEST_DIGEST; nothing is ever tagged.
//
// The exported image must be `image_id` (its config digest), so what is pushed is what the
// caller recorded. The export has k_push_timeout and at most k_max_push_tar_bytes; each registry
// call has k_push_timeout too (a blob's upload is one call). The tar is removed afterwards in
// every case. Failures: the engine's (engine_client.hpp), the registry's (registry_client.hpp),
// "image_save_invalid" (an export PyBox does not read, or not of `image_id`),
// "image_reference_invalid" (a name outside the reference grammar), "file_unwritable"
// (work_dir). Blocking reads of the tar file happen on the calling coroutine's executor
// between network writes. Both the engine client and the address must outlive the call.
#pragma once

#include "common/error.hpp"
#include "daemon/registry/pinned_reference.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace pybox::engine {
class EngineClient;
}

namespace pybox::registry {

inline constexpr std::chrono::minutes k_push_timeout{10};
inline constexpr std::uint64_t k_max_push_tar_bytes = std::uint64_t{8} << 30;  // 8 GiB

struct PushedImage {
    PinnedReference reference;  // REGISTRY/PREFIX/NAME@sha256:<manifest digest>
    std::string image_id;       // the config's digest: the engine's image ID
    std::size_t blobs_uploaded = 0;
    std::size_t blobs_present = 0;  // already in the repository, not sent
    std::uint64_t bytes_uploaded = 0;
};

boost::asio::awaitable<Expected<PushedImage>> push_image(engine::EngineClient& engine, const RegistryAddress& address,
                                                         std::string_view name, std::string_view image_id,
                                                         const std::filesystem::path& work_dir);

}  // namespace pybox::registry
