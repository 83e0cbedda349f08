// The record of which images a cluster engine's registry holds: for each engine image id
// ("sha256:<64 hex>", as images.json records it) pushed there, the pinned reference it was pushed
// as (REGISTRY/PREFIX/NAME@sha256:MANIFEST_DIGEST) and when. A cluster backend names its Pods'
// images by this record, never by a tag, and checks the imageID of a Pod's container status
// against it. One file per cluster engine, <runtime>/pushed-images/ENGINE.json
// (RuntimePaths::pushed_images_file):
//   {"schema_version": 1, "pushed": [{"image_name", "image_id", "reference", "manifest_digest",
//    "pushed_at"}, ...]}
//
// It is PyBox's own file, so it is read as strictly as images.json: at most
// k_max_pushed_images_file_bytes, one JSON document without repeated keys, exactly these keys and
// types, at most k_max_pushed_records records, image ids unique; each record's reference a pinned
// one (pinned_reference.hpp) in a registry (not Docker Hub's short form), written as
// PinnedReference::text() writes it, whose digest is manifest_digest and whose last path
// component is image_name; pushed_at RFC 3339 UTC. Anything else is "pushed_images_invalid"
// with the file's path and what is wrong; a missing file is an empty record.
//
// PushedImages is a value: load() reads the file once, find() answers from memory, put() and
// forget() change the memory and write the whole file again (write_file_atomic: a temporary file
// beside it, fsync, rename; 0600, its folder made 0700 when missing), and change the memory only
// when the write succeeded. Its calls do small blocking file I/O (a few KiB). One writer per file:
// the engine's backend, on its strand; the daemon's lifecycle lock keeps other daemons out. Not
// thread-safe.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::registry {

inline constexpr std::size_t k_max_pushed_images_file_bytes = 64 * 1024;
// Twice images.json's 32: a rebuilt image's old record stays until the push of the new one
// forgets it.
inline constexpr std::size_t k_max_pushed_records = 64;

struct PushedRecord {
    std::string image_name;       // the recorded image's name, e.g. "stdlib"
    std::string image_id;         // the engine's image id, "sha256:<64 hex>"
    std::string reference;        // the full pinned reference, REGISTRY/PREFIX/NAME@MANIFEST_DIGEST
    std::string manifest_digest;  // "sha256:<64 hex>", the digest of the manifest pushed
    std::string pushed_at;        // RFC 3339 UTC, e.g. 2026-01-01T00:00:00.000000Z
    friend bool operator==(const PushedRecord&, const PushedRecord&) = default;
};

// Strict parse of the file's text (the rules above); `file` is only used in messages. Pure.
Expected<std::vector<PushedRecord>> parse_pushed_images(std::string_view text, const std::filesystem::path& file);
// The file's text for `records`, which parse_pushed_images reads back as they are.
std::string serialize_pushed_images(const std::vector<PushedRecord>& records);

class PushedImages {
public:
    // Reads `file`; a missing one is an empty record. Errors: "pushed_images_invalid" (damaged,
    // or larger than k_max_pushed_images_file_bytes), or the file's own ("file_unreadable").
    static Expected<PushedImages> load(std::filesystem::path file);

    // The record of engine image `image_id`, if it was pushed.
    std::optional<PushedRecord> find(std::string_view image_id) const;
    const std::vector<PushedRecord>& records() const { return m_records; }
    const std::filesystem::path& file() const { return m_file; }

    // Adds the record, or replaces the one of the same image id, and writes the file. Refused:
    // a record the file could not hold ("pushed_images_invalid", saying why), a new image id when
    // k_max_pushed_records are held or a file that would be larger than
    // k_max_pushed_images_file_bytes ("pushed_images_full"), and a failed write
    // ("runtime_dir_unusable" for its folder, "file_unwritable" for the file); nothing changes
    // then.
    Expected<void> put(PushedRecord record);
    // Removes the record of `image_id` and writes the file; nothing to write when there is none.
    Expected<void> forget(std::string_view image_id);

private:
    PushedImages(std::filesystem::path file, std::vector<PushedRecord> records)
        : m_file(std::move(file)), m_records(std::move(records))
    {
    }
    Expected<void> write(const std::vector<PushedRecord>& records) const;

    std::filesystem::path m_file;
    std::vector<PushedRecord> m_records;
};

}  // namespace pybox::registry
