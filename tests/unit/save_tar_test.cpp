// The strict reading of an engine's image export (a `docker save` tar).
#include "daemon/registry/save_tar.hpp"

#include "common/api_error_codes.hpp"
#include "common/sha256.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace pybox::registry;
namespace api_error = pybox::api_error;

namespace {

// A ustar archive as Go's archive/tar (and so `docker save`) writes it.
class TarWriter {
public:
    void add(const std::string& name, char type, const std::string& contents = {}, const std::string& link = {})
    {
        std::string block(k_tar_block_bytes, '\0');
        block.replace(0, name.size(), name);
        octal(block, 100, 8, 0644);
        octal(block, 108, 8, 0);
        octal(block, 116, 8, 0);
        octal(block, 124, 12, contents.size());
        octal(block, 136, 12, 0);
        block[156] = type;
        block.replace(157, link.size(), link);
        block.replace(257, 8, std::string("ustar\0" "00", 8));
        block.replace(148, 8, "        ");
        unsigned sum = 0;
        for (const char c : block) sum += static_cast<unsigned char>(c);
        octal(block, 148, 7, sum);
        m_bytes += block + contents + std::string((k_tar_block_bytes - contents.size() % k_tar_block_bytes) % k_tar_block_bytes, '\0');
    }
    std::string finish() const { return m_bytes + std::string(2 * k_tar_block_bytes, '\0'); }

private:
    static void octal(std::string& block, std::size_t at, std::size_t width, std::uint64_t value)
    {
        char text[32];
        std::snprintf(text, sizeof text, "%0*llo", static_cast<int>(width - 1), static_cast<unsigned long long>(value));
        block.replace(at, width - 1, text);
    }
    std::string m_bytes;
};

const std::string k_layer_a = "layer A bytes";
const std::string k_layer_b(1000, 'b');

std::string digest_of(const std::string& bytes) { return "sha256:" + pybox::sha256_hex(bytes); }

std::string config_text(const std::vector<std::string>& diff_ids)
{
    std::string ids;
    for (const auto& id : diff_ids) ids += (ids.empty() ? "\"" : ",\"") + id + "\"";
    return R"({"architecture":"amd64","config":{"Cmd":["python3"]},"os":"linux","rootfs":{"type":"layers","diff_ids":[)" +
           ids + "]}}";
}

struct Save {
    std::string config = config_text({digest_of(k_layer_a), digest_of(k_layer_b)});
    std::string config_name() const { return pybox::sha256_hex(config) + ".json"; }
    std::string manifest() const
    {
        return R"([{"Config":")" + config_name() + R"(","RepoTags":["pybox/stdlib:x"],"Layers":["aaa/layer.tar","bbb/layer.tar"]}])";
    }
    std::string tar(const std::string& manifest_json) const
    {
        TarWriter writer;
        writer.add(config_name(), '0', config);
        writer.add("aaa/", '5');
        writer.add("aaa/VERSION", '0', "1.0");
        writer.add("aaa/layer.tar", '0', k_layer_a);
        writer.add("bbb/", '5');
        writer.add("bbb/layer.tar", '0', k_layer_b);
        writer.add("manifest.json", '0', manifest_json);
        return writer.finish();
    }
};

pybox::Expected<SavedImage> read_save(const std::string& bytes)
{
    std::istringstream in(bytes);
    return read_saved_image(in, bytes.size());
}

std::string layer_bytes(const std::string& tar, const SavedLayer& layer) { return tar.substr(layer.offset, layer.size); }

void refused_save(const std::string& tar, const std::string& why)
{
    const auto image = read_save(tar);
    REQUIRE_FALSE(image.has_value());
    CHECK(image.error().code == api_error::k_image_save_invalid);
    CHECK_THAT(image.error().message, Catch::Contains(why));
}

}  // namespace

TEST_CASE("A docker save tar gives the config, its digest and where each layer's bytes lie")
{
    const Save save;
    const std::string tar = save.tar(save.manifest());
    const auto image = read_save(tar);
    REQUIRE(image.has_value());
    CHECK(image->config == save.config);
    CHECK(image->config_digest == digest_of(save.config));
    REQUIRE(image->layers.size() == 2);
    CHECK(layer_bytes(tar, image->layers[0]) == k_layer_a);
    CHECK(image->layers[0].diff_id == digest_of(k_layer_a));
    CHECK(layer_bytes(tar, image->layers[1]) == k_layer_b);
    CHECK(image->layers[1].diff_id == digest_of(k_layer_b));
}

TEST_CASE("A layer saved as a link to another layer's file is read from that file")
{
    Save save;
    save.config = config_text({digest_of(k_layer_a), digest_of(k_layer_a)});
    TarWriter writer;
    writer.add(save.config_name(), '0', save.config);
    writer.add("aaa/layer.tar", '0', k_layer_a);
    writer.add("bbb/layer.tar", '2', "", "../aaa/layer.tar");
    writer.add("manifest.json", '0', save.manifest());
    const std::string tar = writer.finish();
    const auto image = read_save(tar);
    REQUIRE(image.has_value());
    CHECK(layer_bytes(tar, image->layers[1]) == k_layer_a);
}

TEST_CASE("A save whose config is not named by its own digest, or whose layers disagree with it, is refused")
{
    Save save;
    std::string manifest = save.manifest();
    const std::string other_name = std::string(64, 'f') + ".json";
    manifest.replace(manifest.find(save.config_name()), save.config_name().size(), other_name);
    TarWriter writer;
    writer.add(other_name, '0', save.config);
    writer.add("aaa/layer.tar", '0', k_layer_a);
    writer.add("bbb/layer.tar", '0', k_layer_b);
    writer.add("manifest.json", '0', manifest);
    refused_save(writer.finish(), "its own digest");

    Save one_layer;
    one_layer.config = config_text({digest_of(k_layer_a)});
    refused_save(one_layer.tar(one_layer.manifest()), "the config lists 1 layers and manifest.json 2");
}

TEST_CASE("A save's manifest.json must describe exactly one image with known keys")
{
    const Save save;
    refused_save(save.tar("[]"), "exactly one image");
    refused_save(save.tar(save.manifest().substr(1, save.manifest().size() - 2)), "exactly one image");
    std::string extra = save.manifest();
    extra.insert(extra.size() - 2, R"(,"LayerSources":{})");
    refused_save(save.tar(extra), "LayerSources");
    std::string outside = save.manifest();
    outside.replace(outside.find("aaa/layer.tar"), 13, "../x/layer.tar");
    refused_save(save.tar(outside), "outside the tar");
    std::string missing = save.manifest();
    missing.replace(missing.find("aaa/layer.tar"), 13, "ccc/layer.tar");
    refused_save(save.tar(missing), "layer 0 is not a file");
}

TEST_CASE("Tar headers that are not ustar, have a wrong checksum or an unsafe name are refused")
{
    const Save save;
    std::string tar = save.tar(save.manifest());
    std::string bad_magic = tar;
    bad_magic.replace(257, 6, "gnutar");
    refused_save(bad_magic, "not a POSIX ustar");
    std::string bad_sum = tar;
    bad_sum[10] = 'X';
    refused_save(bad_sum, "checksum");

    TarWriter absolute;
    absolute.add("/etc/passwd", '0', "x");
    refused_save(absolute.finish(), "not a relative path");
    TarWriter device;
    device.add("dev", '3');
    refused_save(device.finish(), "tar type '3'");
    TarWriter twice;
    twice.add("manifest.json", '0', "[]");
    twice.add("manifest.json", '0', "[]");
    refused_save(twice.finish(), "twice");
    refused_save(tar.substr(0, 700), "runs past the end");
    refused_save(tar.substr(0, tar.size() - 2 * k_tar_block_bytes), "end-of-archive");
}

TEST_CASE("A config's rootfs must be layers with sha256 diff_ids and nothing else")
{
    CHECK(parse_config_diff_ids(config_text({digest_of("x")})).value() == std::vector<std::string>{digest_of("x")});
    CHECK_FALSE(parse_config_diff_ids(R"({"rootfs":{"type":"layers","diff_ids":["sha256:abc"]}})").has_value());
    CHECK_FALSE(parse_config_diff_ids(R"({"rootfs":{"type":"other","diff_ids":[]}})").has_value());
    CHECK_FALSE(parse_config_diff_ids(R"({"rootfs":{"type":"layers","diff_ids":[],"extra":1}})").has_value());
    CHECK_FALSE(parse_config_diff_ids(R"({"os":"linux"})").has_value());
    CHECK_FALSE(parse_config_diff_ids(R"({"rootfs":{"type":"layers","diff_ids":[]},"rootfs":{}})").has_value());
}
