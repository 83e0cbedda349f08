#include "daemon/registry/image_manifest.hpp"

#include "common/sha256.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace pybox::registry {

namespace {

boost::json::object descriptor(std::string_view media_type, const Blob& blob)
{
    // boost::json::object keeps insertion order, so the bytes are fixed by this code.
    boost::json::object object;
    object["mediaType"] = media_type;
    object["digest"] = blob.digest;
    object["size"] = blob.size;
    return object;
}

}  // namespace

ImageManifest build_image_manifest(const Blob& config, const std::vector<Blob>& layers)
{
    boost::json::object manifest;
    manifest["schemaVersion"] = 2;
    manifest["mediaType"] = k_manifest_media_type;
    manifest["config"] = descriptor(k_config_media_type, config);
    boost::json::array layer_array;
    for (const auto& layer : layers) {
        layer_array.emplace_back(descriptor(k_layer_media_type, layer));
    }
    manifest["layers"] = std::move(layer_array);
    ImageManifest built;
    built.bytes = boost::json::serialize(manifest);
    built.digest = "sha256:" + sha256_hex(built.bytes);
    return built;
}

}  // namespace pybox::registry
