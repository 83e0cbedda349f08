// The image as an engine exports it (GET /images/{name}/get, a `docker save` tar), read strictly
// and bounded: the tar's headers, then manifest.json, the image's config and where each layer's
// bytes lie in the tar, so that a push streams each layer from the file, never the image whole
// in memory. Untrusted bytes (a tar from an engine, possibly another host's): fuzzed.
//
// The tar: POSIX ustar headers only ("ustar\0" "00", checksum checked, octal sizes), regular
// files, folders and symbolic links (`docker save` links a layer it holds twice), at most
// k_max_tar_entries, names relative without "..", none twice; the first zero block ends it.
// manifest.json: one image ([{"Config", "RepoTags", "Layers"}], nothing else, at most
// k_max_manifest_bytes). The config: at most k_max_config_bytes, a JSON object whose
// rootfs is {"type": "layers", "diff_ids": [sha256 digests]}, one per layer (its other keys are
// the engine's and kept as bytes), named by its own digest ("HEX.json", or
// "blobs/sha256/HEX"). A layer is a regular file, or a link to one in the tar. The layer bytes are
// not hashed here: the push hashes them as it sends them and compares with the diff_id.
// Failures: "image_save_invalid" with what is wrong; "io_error" when the stream cannot be read.
// Blocking reads of the stream given; pure otherwise.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::registry {

inline constexpr std::size_t k_tar_block_bytes = 512;
inline constexpr std::size_t k_max_tar_entries = 4'096;
inline constexpr std::size_t k_max_manifest_bytes = 1 << 20;
inline constexpr std::size_t k_max_config_bytes = 4 << 20;
inline constexpr std::size_t k_max_layers = 127;  // Docker refuses images of more layers than this

enum class TarEntryType { file, folder, symlink };

struct TarHeader {
    std::string name;  // without a folder's trailing '/'
    TarEntryType type = TarEntryType::file;
    std::uint64_t size = 0;  // 0 but for files
    std::string link_target;
};

// One 512-byte header block: the header, nullopt for the zero block that ends the tar, or
// "image_save_invalid".
Expected<std::optional<TarHeader>> parse_tar_header(std::string_view block);

struct TarEntry {
    TarHeader header;
    std::uint64_t offset = 0;  // of the contents in the stream
};

// Every entry's header and where its contents lie; the stream holds `size` bytes.
Expected<std::vector<TarEntry>> read_tar_index(std::istream& in, std::uint64_t size);

struct SavedLayer {
    std::uint64_t offset = 0;  // in the tar
    std::uint64_t size = 0;
    std::string diff_id;  // "sha256:...": the digest of these bytes, as the config says
};

struct SavedImage {
    std::string config;         // its bytes, as the engine wrote them
    std::string config_digest;  // "sha256:...": the image ID
    std::vector<SavedLayer> layers;
};

// The one image of a `docker save` tar of `size` bytes.
Expected<SavedImage> read_saved_image(std::istream& in, std::uint64_t size);

// The two documents on their own (for the fuzz target): manifest.json's Config name and Layers
// paths, and a config's diff_ids.
struct SaveManifest {
    std::string config;
    std::vector<std::string> layers;
};
Expected<SaveManifest> parse_save_manifest(std::string_view text);
Expected<std::vector<std::string>> parse_config_diff_ids(std::string_view text);

}  // namespace pybox::registry
