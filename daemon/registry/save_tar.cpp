#include "daemon/registry/save_tar.hpp"

#include "common/api_error_codes.hpp"
#include "common/sha256.hpp"
#include "daemon/registry/pinned_reference.hpp"
#include "util/json_reader.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <map>

namespace pybox::registry {

namespace {

constexpr std::size_t k_max_document_depth = 32;

Error invalid(std::string_view why)
{
    return make_error(api_error::k_image_save_invalid, "The engine's image export is not a tar PyBox reads: " +
                                                           std::string(why) + ".");
}

std::string_view field(std::string_view block, std::size_t offset, std::size_t length)
{
    const std::string_view raw = block.substr(offset, length);
    return raw.substr(0, std::min(raw.find('\0'), raw.size()));
}

// Octal digits, then only NULs or spaces.
std::optional<std::uint64_t> octal(std::string_view raw)
{
    std::uint64_t value = 0;
    std::size_t i = 0;
    for (; i < raw.size() && raw[i] >= '0' && raw[i] <= '7'; ++i) {
        if (value > (UINT64_MAX >> 3)) return std::nullopt;
        value = value * 8 + static_cast<std::uint64_t>(raw[i] - '0');
    }
    if (i == 0) return std::nullopt;
    for (; i < raw.size(); ++i) {
        if (raw[i] != '\0' && raw[i] != ' ') return std::nullopt;
    }
    return value;
}

bool is_safe_name(std::string_view name)
{
    if (name.empty() || name.starts_with('/')) return false;
    for (const char c : name) {
        if (c < 0x21 || c > 0x7e) return false;
    }
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('/', start), name.size());
        const std::string_view part = name.substr(start, end - start);
        if (part.empty() || part == "." || part == "..") return false;
        start = end + 1;
    }
    return true;
}

Expected<std::string> read_at(std::istream& in, std::uint64_t offset, std::uint64_t size, std::size_t max_bytes,
                              std::string_view what)
{
    if (size > max_bytes)
        return invalid(std::string(what) + " is larger than " + std::to_string(max_bytes) + " bytes");
    std::string bytes(static_cast<std::size_t>(size), '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!in || static_cast<std::uint64_t>(in.gcount()) != size)
        return make_error(api_error::k_io_error, "The image export could not be read at " + std::string(what) + ".");
    return bytes;
}

// The entry a path names, following one symbolic link (relative to the link's folder).
const TarEntry* regular_file(const std::map<std::string, const TarEntry*>& entries, const std::string& path)
{
    const auto found = entries.find(path);
    if (found == entries.end()) return nullptr;
    const TarEntry* entry = found->second;
    if (entry->header.type == TarEntryType::symlink) {
        std::string target = entry->header.link_target;
        std::string folder = path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
        while (target.starts_with("../")) {
            if (folder.empty()) return nullptr;
            target.erase(0, 3);
            const auto slash = folder.rfind('/');
            folder = slash == std::string::npos ? std::string() : folder.substr(0, slash);
        }
        const std::string resolved = folder.empty() ? target : folder + "/" + target;
        if (!is_safe_name(resolved)) return nullptr;
        const auto linked = entries.find(resolved);
        if (linked == entries.end()) return nullptr;
        entry = linked->second;
    }
    return entry->header.type == TarEntryType::file ? entry : nullptr;
}

Expected<boost::json::value> parse_document(std::string_view text, std::string_view what)
{
    if (!util::is_valid_utf8(text)) return invalid(std::string(what) + " is not UTF-8 text");
    auto parsed = util::parse_json_strictly(text, k_max_document_depth);
    if (!parsed.ok()) return invalid(std::string(what) + " " + parsed.refusal());
    return std::move(parsed.value);
}

// "HEX.json" or "blobs/sha256/HEX": the digest the config's name claims, if any.
std::optional<std::string> digest_in_config_name(std::string_view name)
{
    std::string_view hex = name;
    if (hex.starts_with("blobs/sha256/")) {
        hex.remove_prefix(13);
    } else if (hex.ends_with(".json")) {
        hex.remove_suffix(5);
    } else {
        return std::nullopt;
    }
    std::string digest = "sha256:" + std::string(hex);
    if (!is_sha256_digest(digest)) return std::nullopt;
    return digest;
}

}  // namespace

Expected<std::optional<TarHeader>> parse_tar_header(std::string_view block)
{
    if (block.size() != k_tar_block_bytes) return invalid("a header block is not 512 bytes");
    if (std::all_of(block.begin(), block.end(), [](char c) { return c == '\0'; })) return std::optional<TarHeader>();
    if (block.substr(257, 8) != std::string_view("ustar\0" "00", 8))
        return invalid("a header is not a POSIX ustar one");
    const auto checksum = octal(block.substr(148, 8));
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < block.size(); ++i) {
        sum += (i >= 148 && i < 156) ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(block[i]);
    }
    if (!checksum || *checksum != sum) return invalid("a header's checksum is wrong");
    TarHeader header;
    const std::string_view prefix = field(block, 345, 155);
    const std::string_view name = field(block, 0, 100);
    header.name = prefix.empty() ? std::string(name) : std::string(prefix) + "/" + std::string(name);
    const auto size = octal(block.substr(124, 12));
    if (!size) return invalid("a header's size is not an octal number");
    header.size = *size;
    switch (block[156]) {
    case '0':
    case '\0':
        header.type = TarEntryType::file;
        break;
    case '5':
        header.type = TarEntryType::folder;
        if (header.name.ends_with('/')) header.name.pop_back();
        break;
    case '2':
        header.type = TarEntryType::symlink;
        header.link_target = std::string(field(block, 157, 100));
        if (header.link_target.empty()) return invalid("a symbolic link names no target");
        break;
    default:
        return invalid("an entry is of tar type '" + util::printable_excerpt(block.substr(156, 1)) +
                       "', not a file, folder or symbolic link");
    }
    if (header.type != TarEntryType::file && header.size != 0) return invalid("a folder or link has contents");
    if (!is_safe_name(header.name))
        return invalid("an entry's name \"" + util::printable_excerpt(header.name) + "\" is not a relative path");
    return std::optional<TarHeader>(std::move(header));
}

Expected<std::vector<TarEntry>> read_tar_index(std::istream& in, std::uint64_t size)
{
    std::vector<TarEntry> entries;
    std::uint64_t at = 0;
    std::string block(k_tar_block_bytes, '\0');
    while (true) {
        if (size - at < k_tar_block_bytes) return invalid("it ends before its end-of-archive block");
        in.clear();
        in.seekg(static_cast<std::streamoff>(at));
        in.read(block.data(), static_cast<std::streamsize>(block.size()));
        if (!in) return make_error(api_error::k_io_error, "The image export could not be read at byte " + std::to_string(at) + ".");
        auto header = parse_tar_header(block);
        if (!header) return header.error();
        if (!*header) return entries;
        if (entries.size() == k_max_tar_entries)
            return invalid("it holds more than " + std::to_string(k_max_tar_entries) + " entries");
        at += k_tar_block_bytes;
        const std::uint64_t tail = (*header)->size % k_tar_block_bytes;
        const std::uint64_t padded = (*header)->size + (tail == 0 ? 0 : k_tar_block_bytes - tail);
        if (padded < (*header)->size || padded > size - at)
            return invalid("the entry \"" + util::printable_excerpt((*header)->name) + "\" runs past the end");
        entries.push_back(TarEntry{std::move(**header), at});
        at += padded;
    }
}

Expected<SaveManifest> parse_save_manifest(std::string_view text)
{
    auto document = parse_document(text, "manifest.json");
    if (!document) return document.error();
    const auto* images = document->if_array();
    if (images == nullptr || images->size() != 1)
        return invalid("manifest.json is not an array of exactly one image");
    std::string error;
    util::ObjectReader reader((*images)[0], "manifest.json[0]", error, util::ReadMode::strict);
    SaveManifest manifest;
    manifest.config = reader.string("Config");
    if (const auto& tags = reader.any("RepoTags"); !tags.is_null() && !tags.is_array())
        reader.fail("RepoTags", "must be null or an array");
    manifest.layers = reader.strings("Layers");
    reader.finish();
    if (!error.empty()) return invalid(error);
    if (manifest.layers.empty() || manifest.layers.size() > k_max_layers)
        return invalid("manifest.json names " + std::to_string(manifest.layers.size()) + " layers, not 1 to " +
                       std::to_string(k_max_layers));
    for (const auto& path : manifest.layers) {
        if (!is_safe_name(path)) return invalid("manifest.json names a layer outside the tar");
    }
    if (!is_safe_name(manifest.config)) return invalid("manifest.json names a config outside the tar");
    return manifest;
}

Expected<std::vector<std::string>> parse_config_diff_ids(std::string_view text)
{
    auto document = parse_document(text, "the image config");
    if (!document) return document.error();
    std::string error;
    // The config's other keys are the engine's business; rootfs is read whole.
    util::ObjectReader config(*document, "config", error, util::ReadMode::tolerant);
    util::ObjectReader rootfs(config.any("rootfs"), "config.rootfs", error, util::ReadMode::strict);
    if (rootfs.string("type") != "layers" && error.empty()) rootfs.fail("type", "must be \"layers\"");
    std::vector<std::string> diff_ids = rootfs.strings("diff_ids");
    rootfs.finish();
    if (!error.empty()) return invalid(error);
    for (const auto& id : diff_ids) {
        if (!is_sha256_digest(id)) return invalid("the image config has a diff_id that is not a sha256 digest");
    }
    return diff_ids;
}

Expected<SavedImage> read_saved_image(std::istream& in, std::uint64_t size)
{
    auto index = read_tar_index(in, size);
    if (!index) return index.error();
    std::map<std::string, const TarEntry*> entries;
    for (const auto& entry : *index) {
        if (!entries.emplace(entry.header.name, &entry).second)
            return invalid("it holds \"" + util::printable_excerpt(entry.header.name) + "\" twice");
    }
    const TarEntry* manifest_entry = regular_file(entries, "manifest.json");
    if (manifest_entry == nullptr) return invalid("it holds no manifest.json file");
    auto manifest_text = read_at(in, manifest_entry->offset, manifest_entry->header.size, k_max_manifest_bytes, "manifest.json");
    if (!manifest_text) return manifest_text.error();
    auto manifest = parse_save_manifest(*manifest_text);
    if (!manifest) return manifest.error();

    const TarEntry* config_entry = regular_file(entries, manifest->config);
    if (config_entry == nullptr) return invalid("the config manifest.json names is not a file in it");
    SavedImage image;
    auto config = read_at(in, config_entry->offset, config_entry->header.size, k_max_config_bytes, "the image config");
    if (!config) return config.error();
    image.config = std::move(*config);
    image.config_digest = "sha256:" + sha256_hex(image.config);
    if (digest_in_config_name(manifest->config) != image.config_digest)
        return invalid("the config's name is not HEX.json or blobs/sha256/HEX of its own digest");
    auto diff_ids = parse_config_diff_ids(image.config);
    if (!diff_ids) return diff_ids.error();
    if (diff_ids->size() != manifest->layers.size())
        return invalid("the config lists " + std::to_string(diff_ids->size()) + " layers and manifest.json " +
                       std::to_string(manifest->layers.size()));
    for (std::size_t i = 0; i < diff_ids->size(); ++i) {
        const TarEntry* layer = regular_file(entries, manifest->layers[i]);
        if (layer == nullptr) return invalid("layer " + std::to_string(i) + " is not a file in it");
        image.layers.push_back(SavedLayer{layer->offset, layer->header.size, (*diff_ids)[i]});
    }
    return image;
}

}  // namespace pybox::registry
