#include "daemon/registry/pushed_images.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/paths.hpp"
#include "daemon/registry/pinned_reference.hpp"
#include "util/json_reader.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdint>
#include <set>

namespace pybox::registry {

namespace json = boost::json;

namespace {

constexpr std::int64_t k_schema_version = 1;
constexpr std::size_t k_max_depth = 4;  // the object, its array, a record, a value
constexpr std::size_t k_max_timestamp_chars = 64;

Error damaged(const std::filesystem::path& file, std::string_view why)
{
    return make_error(api_error::k_pushed_images_invalid,
                      file.string() + " is damaged (" + std::string(why) +
                          "); move it away, and pybox vm start pushes the images again.");
}

// Why `record` may not be in the file, or nullopt when it may.
std::optional<std::string> record_problem(const PushedRecord& record)
{
    const std::string what = "the record of " + util::printable_excerpt(record.image_name, 64);
    if (!is_sha256_digest(record.image_id)) return what + ": image_id is not sha256: and 64 lower-case hex digits";
    if (!is_sha256_digest(record.manifest_digest))
        return what + ": manifest_digest is not sha256: and 64 lower-case hex digits";
    auto reference = parse_pinned_reference(record.reference);
    if (!reference) return what + ": " + reference.error().message;
    if (!reference->registry) return what + ": its reference names no registry";
    if (reference->text() != record.reference) return what + ": its reference is not written as PyBox writes it";
    if (reference->digest != record.manifest_digest) return what + ": its reference's digest is not manifest_digest";
    const auto last_slash = reference->repository.rfind('/');
    const std::string_view name = std::string_view(reference->repository).substr(last_slash + 1);
    if (last_slash == std::string::npos || record.image_name != name)
        return what + ": its reference is not PREFIX/" + util::printable_excerpt(record.image_name, 64);
    if (record.pushed_at.size() > k_max_timestamp_chars || !record.pushed_at.ends_with('Z') ||
        !parse_rfc3339_ns(record.pushed_at))
        return what + ": pushed_at is not an RFC 3339 UTC time";
    return std::nullopt;
}

PushedRecord read_record(util::ObjectReader& reader)
{
    PushedRecord record;
    record.image_name = reader.string("image_name");
    record.image_id = reader.string("image_id");
    record.reference = reader.string("reference");
    record.manifest_digest = reader.string("manifest_digest");
    record.pushed_at = reader.string("pushed_at");
    reader.finish();
    return record;
}

}  // namespace

Expected<std::vector<PushedRecord>> parse_pushed_images(std::string_view text, const std::filesystem::path& file)
{
    if (text.size() > k_max_pushed_images_file_bytes)
        return damaged(file, "larger than " + std::to_string(k_max_pushed_images_file_bytes) + " bytes");
    if (!util::is_valid_utf8(text)) return damaged(file, "not UTF-8 text");
    auto parsed = util::parse_json_strictly(text, k_max_depth);
    if (parsed.duplicate_key) return damaged(file, "it repeats the key \"" + *parsed.duplicate_key + "\"");
    if (!parsed.ok()) return damaged(file, "not JSON: " + parsed.problem);

    std::string error;
    util::ObjectReader top(parsed.value, "", error, util::ReadMode::strict);
    if (const auto version = top.int64("schema_version"); error.empty() && version != k_schema_version)
        top.fail("schema_version", "is not 1");
    auto readers = top.objects("pushed");
    top.finish();
    if (!error.empty()) return damaged(file, error);
    if (readers.size() > k_max_pushed_records)
        return damaged(file, "more than " + std::to_string(k_max_pushed_records) + " records");

    std::vector<PushedRecord> records;
    std::set<std::string> image_ids;
    for (auto& reader : readers) {
        auto record = read_record(reader);
        if (!error.empty()) return damaged(file, error);
        if (auto problem = record_problem(record)) return damaged(file, *problem);
        if (!image_ids.insert(record.image_id).second) return damaged(file, "the image " + record.image_id + " is recorded twice");
        records.push_back(std::move(record));
    }
    return records;
}

std::string serialize_pushed_images(const std::vector<PushedRecord>& records)
{
    json::array pushed;
    for (const PushedRecord& record : records) {
        pushed.push_back(json::object{{"image_name", record.image_name},
                                      {"image_id", record.image_id},
                                      {"reference", record.reference},
                                      {"manifest_digest", record.manifest_digest},
                                      {"pushed_at", record.pushed_at}});
    }
    return json::serialize(json::object{{"schema_version", k_schema_version}, {"pushed", std::move(pushed)}}) + "\n";
}

Expected<PushedImages> PushedImages::load(std::filesystem::path file)
{
    auto text = read_regular_file_capped(file, k_max_pushed_images_file_bytes, false);
    if (!text) {
        if (text.error().code == api_error::k_file_missing) return PushedImages(std::move(file), {});
        if (text.error().code == api_error::k_too_large)
            return damaged(file, "larger than " + std::to_string(k_max_pushed_images_file_bytes) + " bytes");
        return text.error();
    }
    auto records = parse_pushed_images(*text, file);
    if (!records) return records.error();
    return PushedImages(std::move(file), std::move(*records));
}

std::optional<PushedRecord> PushedImages::find(std::string_view image_id) const
{
    const auto found = std::find_if(m_records.begin(), m_records.end(),
                                    [&](const PushedRecord& record) { return record.image_id == image_id; });
    if (found == m_records.end()) return std::nullopt;
    return *found;
}

Expected<void> PushedImages::put(PushedRecord record)
{
    if (auto problem = record_problem(record))
        return make_error(api_error::k_pushed_images_invalid,
                          "Not written to " + m_file.string() + ": " + *problem + ".");
    auto records = m_records;
    const auto same = std::find_if(records.begin(), records.end(),
                                   [&](const PushedRecord& held) { return held.image_id == record.image_id; });
    if (same != records.end()) {
        *same = std::move(record);
    } else {
        if (records.size() >= k_max_pushed_records)
            return make_error(api_error::k_pushed_images_full,
                              m_file.string() + " holds " + std::to_string(k_max_pushed_records) +
                                  " pushed images already; forget one first.");
        records.push_back(std::move(record));
    }
    if (auto written = write(records); !written) return written.error();
    m_records = std::move(records);
    return {};
}

Expected<void> PushedImages::forget(std::string_view image_id)
{
    auto records = m_records;
    const auto kept_end = std::remove_if(records.begin(), records.end(),
                                         [&](const PushedRecord& record) { return record.image_id == image_id; });
    if (kept_end == records.end()) return {};
    records.erase(kept_end, records.end());
    if (auto written = write(records); !written) return written.error();
    m_records = std::move(records);
    return {};
}

Expected<void> PushedImages::write(const std::vector<PushedRecord>& records) const
{
    const std::string text = serialize_pushed_images(records);
    if (text.size() > k_max_pushed_images_file_bytes)
        return make_error(api_error::k_pushed_images_full,
                          "Not written to " + m_file.string() + ": its records would take more than " +
                              std::to_string(k_max_pushed_images_file_bytes) + " bytes; forget one first.");
    if (auto folder = ensure_private_dir(m_file.parent_path()); !folder) return folder.error();
    return write_file_atomic(m_file, text, 0600);
}

}  // namespace pybox::registry
