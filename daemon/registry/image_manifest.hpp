// The manifest PyBox pushes for an image: an OCI image manifest whose config is the engine's
// config bytes and whose layers are the saved layer tars uncompressed, so that every digest in
// it is one the engine already knows (the config digest is the image ID, a layer's digest its
// diff_id) and nothing is compressed, which would make the bytes depend on a compressor.
// Measured: Debian's docker.io 20.10 pulls such a manifest from Debian's docker-registry 2.8 by
// digest and gets the same image ID. Pure; the same inputs always give the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::registry {

inline constexpr std::string_view k_manifest_media_type = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view k_config_media_type = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view k_layer_media_type = "application/vnd.oci.image.layer.v1.tar";

struct Blob {
    std::string digest;  // "sha256:..."
    std::uint64_t size = 0;
};

struct ImageManifest {
    std::string bytes;   // the JSON sent to the registry, compact, keys in a fixed order
    std::string digest;  // "sha256:" + SHA-256 of `bytes`: the image's name in the registry
};

ImageManifest build_image_manifest(const Blob& config, const std::vector<Blob>& layers);

}  // namespace pybox::registry
