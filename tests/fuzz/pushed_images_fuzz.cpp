// Fuzzes the reader of a cluster engine's record of pushed images
// (daemon/registry/pushed_images.hpp): whatever it accepts holds at most k_max_pushed_records
// records, each with a pinned reference in a registry whose digest is the record's manifest
// digest, image ids unique, and written again it reads back as the same records.
#include "daemon/registry/pinned_reference.hpp"
#include "daemon/registry/pushed_images.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

using pybox::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace pybox::registry;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto records = parse_pushed_images(text, "/fuzz/pushed-images/cluster.json");
    if (!records) {
        check(records.error().code == "pushed_images_invalid" && !records.error().message.empty());
        return 0;
    }
    check(records->size() <= k_max_pushed_records);
    std::set<std::string> image_ids;
    for (const auto& record : *records) {
        check(image_ids.insert(record.image_id).second);
        check(is_sha256_digest(record.image_id) && is_sha256_digest(record.manifest_digest));
        const auto reference = parse_pinned_reference(record.reference);
        check(reference.has_value() && reference->registry.has_value());
        check(reference->digest == record.manifest_digest && reference->text() == record.reference);
    }
    const auto again = parse_pushed_images(serialize_pushed_images(*records), "/fuzz/again.json");
    check(again.has_value() && *again == *records);
    return 0;
}
