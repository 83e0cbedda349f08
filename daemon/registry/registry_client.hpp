// RegistryClient: the OCI distribution API (HTTP/1.1) of one registry, for pushing an image:
// whether a blob is there (HEAD), a blob's upload (POST /v2/<name>/blobs/uploads/, then one PUT
// of the whole blob to the Location answered, with ?digest=), and a manifest's PUT by its
// digest, never by a tag. No authentication.
//
// Plain HTTP, so only a registry on a loopback IP address (127.0.0.0/8, [::1]) is accepted, as
// Docker itself trusts only those without TLS: make() refuses any other host with
// "registry_not_loopback" (HTTPS is not implemented, so a registry on another host cannot be
// used yet), and refuses a name ("localhost" too: no name is resolved).
//
// Each call opens its own connection and applies its timeout to the whole exchange; an answer's
// header is bounded by Beast's 8 KiB and its body by k_max_registry_answer_bytes. A blob's bytes
// are streamed from the caller's stream in k_chunk_bytes pieces and hashed on the way; bytes
// whose digest is not the blob's fail ("image_save_invalid") whatever the registry said.
// Failures: "registry_unreachable" (no connection), "registry_timeout", "registry_protocol"
// (malformed HTTP, a body over the cap, a Location elsewhere, a missing or different
// Docker-Content-Digest), "registry_error" (an unexpected status, quoting the registry's
// errors), "io_error" (the blob's stream). Coroutines on the executor given at construction;
// the client holds no connection between calls, and must outlive them.
#pragma once

#include "common/error.hpp"
#include "daemon/registry/image_manifest.hpp"
#include "daemon/registry/pinned_reference.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::registry {

inline constexpr std::size_t k_max_registry_answer_bytes = 64 * 1024;
using Timeout = std::chrono::milliseconds;

class RegistryClient {
public:
    static Expected<std::unique_ptr<RegistryClient>> make(boost::asio::any_io_executor executor, RegistryHost host);

    const RegistryHost& host() const { return m_host; }

    // The blob's size when the repository holds it, nullopt when it does not (404).
    boost::asio::awaitable<Expected<std::optional<std::uint64_t>>> blob_size(std::string_view repository,
                                                                            std::string_view digest, Timeout timeout);
    // Uploads `blob.size` bytes read from `in` at `offset`, which must hash to `blob.digest`.
    boost::asio::awaitable<Expected<void>> upload_blob(std::string_view repository, const Blob& blob, std::istream& in,
                                                       std::uint64_t offset, Timeout timeout);
    // PUTs the manifest under its digest; the registry's Docker-Content-Digest must be that digest.
    boost::asio::awaitable<Expected<void>> put_manifest(std::string_view repository, const ImageManifest& manifest,
                                                        Timeout timeout);

private:
    RegistryClient(boost::asio::any_io_executor executor, RegistryHost host);

    boost::asio::any_io_executor m_executor;
    RegistryHost m_host;
};

}  // namespace pybox::registry
