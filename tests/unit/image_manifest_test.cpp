// The OCI manifest PyBox pushes: its bytes and digest.
#include "daemon/registry/image_manifest.hpp"

#include "common/sha256.hpp"

#include <catch2/catch.hpp>

using namespace pybox::registry;

TEST_CASE("The manifest names the config and the uncompressed layers in a fixed compact form, and its digest is that of its bytes")
{
    const Blob config{"sha256:" + std::string(64, 'c'), 895};
    const std::vector<Blob> layers{{"sha256:" + std::string(64, 'a'), 185607680}, {"sha256:" + std::string(64, 'b'), 1024}};
    const auto manifest = build_image_manifest(config, layers);
    CHECK(manifest.bytes ==
          R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
          R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:)" + std::string(64, 'c') +
              R"(","size":895},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:)" +
              std::string(64, 'a') + R"(","size":185607680},{"mediaType":"application/vnd.oci.image.layer.v1.tar",)"
              R"("digest":"sha256:)" + std::string(64, 'b') + R"(","size":1024}]})");
    CHECK(manifest.digest == "sha256:" + pybox::sha256_hex(manifest.bytes));
    CHECK(build_image_manifest(config, layers).digest == manifest.digest);
}
