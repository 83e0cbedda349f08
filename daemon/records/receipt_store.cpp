#include "daemon/records/receipt_store.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "proto/attempts.hpp"
#include "proto/receipt_signature.hpp"
#include "util/json_writer.hpp"
#include "util/strict_json.hpp"

#include <algorithm>
#include <system_error>

namespace pybox::daemon {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// A kept file is {"owner_uid", "receipt"}: two levels above the receipt's own.
constexpr std::size_t k_max_kept_depth = 66;

const json::object* object_at(const json::object& object, std::string_view key)
{
    const json::value* value = object.if_contains(key);
    return value != nullptr ? value->if_object() : nullptr;
}

std::string string_at(const json::object* object, std::string_view key)
{
    const json::value* value = object != nullptr ? object->if_contains(key) : nullptr;
    return value != nullptr && value->is_string() ? std::string(value->get_string()) : std::string();
}

// The index entry of a kept file's receipt, read from the file (a receipt of any daemon version).
proto::KeptReceipt kept_file_entry(const json::object& receipt, std::uint32_t owner_uid, std::uint64_t bytes)
{
    proto::KeptReceipt kept;
    const json::object* identity = object_at(receipt, "identity");
    kept.run_id = string_at(identity, "run_id");
    kept.created_at = string_at(identity, "created_at");
    kept.image = string_at(identity, "image");
    const json::object* observed = object_at(receipt, "observed");
    const json::object* termination = observed != nullptr ? object_at(*observed, "termination") : nullptr;
    kept.mechanism = string_at(termination, "mechanism");
    if (const json::value* code = termination != nullptr ? termination->if_contains("exit_code") : nullptr;
        code != nullptr && code->is_int64())
        kept.exit_code = code->get_int64();
    kept.signed_receipt = receipt.contains("signature");
    kept.bytes = bytes;
    kept.owner_uid = owner_uid;
    return kept;
}

// The index entry of a receipt this daemon issues.
proto::KeptReceipt kept_receipt_entry(const proto::Receipt& receipt, std::uint32_t owner_uid, std::uint64_t bytes)
{
    const auto& termination = receipt.observed.termination;
    return proto::KeptReceipt{receipt.identity.run_id,
                              receipt.identity.created_at,
                              receipt.identity.image,
                              termination.exit_code,
                              std::string(proto::to_string(termination.mechanism)),
                              receipt.signature.has_value(),
                              bytes,
                              owner_uid};
}

bool older(const proto::KeptReceipt& a, const proto::KeptReceipt& b)
{
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.run_id < b.run_id;
}

Error no_such_receipt(const std::string& run_id)
{
    return make_error(api_error::k_no_such_receipt, "pyboxd keeps no receipt of run " + (proto::is_run_id(run_id) ? run_id : "(not a run id)") +
                                             " that you may see: it was never issued, is another user's, or was "
                                             "dropped as the oldest (`pybox receipts` lists what is kept).");
}

}  // namespace

ReceiptStore::ReceiptStore(fs::path folder, SigningKey key, Bounds bounds)
    : m_folder(std::move(folder)), m_key(std::move(key)), m_bounds(bounds)
{
}

ReceiptStore::ReceiptStore(fs::path folder, SigningKey key) : ReceiptStore(std::move(folder), std::move(key), Bounds{}) {}

fs::path ReceiptStore::file_of(const std::string& run_id) const { return m_folder / (run_id + ".json"); }

std::size_t ReceiptStore::load()
{
    m_kept.clear();
    m_bytes = 0;
    std::size_t foreign = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(m_folder, ec)) {
        const std::string name = entry.path().filename().string();
        const std::string run_id = name.size() > 5 ? name.substr(0, name.size() - 5) : std::string();
        auto text = proto::is_run_id(run_id) && name.ends_with(".json")
                        ? read_regular_file_capped(entry.path(), m_bounds.max_bytes, false)
                        : Expected<std::string>(make_error(api_error::k_file_unreadable, name));
        auto parsed = text ? util::parse_json_strictly(*text, k_max_kept_depth) : util::StrictJson{};
        const json::object* document = text && parsed.ok() ? parsed.value.if_object() : nullptr;
        const json::object* receipt = document != nullptr ? object_at(*document, "receipt") : nullptr;
        const json::value* owner = document != nullptr ? document->if_contains("owner_uid") : nullptr;
        json::error_code owner_ec;
        const auto owner_uid = owner != nullptr ? owner->to_number<std::uint32_t>(owner_ec) : 0;
        if (receipt == nullptr || owner == nullptr || owner_ec) {
            ++foreign;
            continue;
        }
        auto kept = kept_file_entry(*receipt, owner_uid, text->size());
        if (kept.run_id != run_id) {
            ++foreign;
            continue;
        }
        keep(std::move(kept));
    }
    apply_bounds();
    return foreign;
}

void ReceiptStore::keep(proto::KeptReceipt kept)
{
    if (auto same = std::find_if(m_kept.begin(), m_kept.end(), [&](const auto& k) { return k.run_id == kept.run_id; });
        same != m_kept.end()) {
        m_bytes -= same->bytes;
        m_kept.erase(same);
    }
    m_bytes += kept.bytes;
    m_kept.insert(std::upper_bound(m_kept.begin(), m_kept.end(), kept, older), std::move(kept));
}

void ReceiptStore::apply_bounds()
{
    std::size_t dropped = 0;
    while (dropped < m_kept.size() &&
           (m_kept.size() - dropped > m_bounds.max_receipts || m_bytes > m_bounds.max_bytes)) {
        const auto& oldest = m_kept[dropped++];
        std::error_code ignored;
        fs::remove(file_of(oldest.run_id), ignored);
        m_bytes -= oldest.bytes;
    }
    m_kept.erase(m_kept.begin(), m_kept.begin() + static_cast<std::ptrdiff_t>(dropped));
}

Expected<void> ReceiptStore::issue(proto::Receipt& receipt, std::uint32_t owner_uid)
{
    if (auto signed_in_place = proto::sign_receipt(receipt, m_key); !signed_in_place) return signed_in_place.error();
    const std::string text =
        util::to_json_text(json::object{{"owner_uid", owner_uid}, {"receipt", proto::receipt_to_json(receipt)}});
    auto kept = kept_receipt_entry(receipt, owner_uid, text.size());
    if (!proto::is_run_id(kept.run_id))
        return make_error(api_error::k_internal_error, "The receipt to keep has no run id; it was not kept.");
    if (text.size() > m_bounds.max_bytes)
        return make_error(api_error::k_too_large, "The receipt of run " + kept.run_id + " is larger than the " +
                                           std::to_string(m_bounds.max_bytes) + " bytes the daemon keeps; it was not kept.");
    if (auto written = write_file_atomic(file_of(kept.run_id), text); !written) return written.error();
    keep(std::move(kept));
    apply_bounds();
    return {};
}

Expected<proto::ReceiptList> ReceiptStore::list(std::optional<std::uint32_t> viewer)
{
    proto::ReceiptList answer{{}, m_bounds.max_receipts, m_bounds.max_bytes};
    for (auto kept = m_kept.rbegin(); kept != m_kept.rend(); ++kept)
        if (!viewer || kept->owner_uid == *viewer) answer.receipts.push_back(*kept);
    return answer;
}

Expected<json::value> ReceiptStore::get(const std::string& run_id, std::optional<std::uint32_t> viewer)
{
    const auto kept = std::find_if(m_kept.begin(), m_kept.end(), [&](const auto& k) { return k.run_id == run_id; });
    if (kept == m_kept.end() || (viewer && kept->owner_uid != *viewer)) return no_such_receipt(run_id);
    auto text = read_regular_file_capped(file_of(run_id), m_bounds.max_bytes, false);
    if (!text) return text.error();
    auto parsed = util::parse_json_strictly(*text, k_max_kept_depth);
    const json::object* document = parsed.ok() ? parsed.value.if_object() : nullptr;
    const json::value* receipt = document != nullptr ? document->if_contains("receipt") : nullptr;
    if (receipt == nullptr)
        return make_error(api_error::k_file_unreadable, file_of(run_id).string() + " no longer holds a kept receipt.");
    return *receipt;
}

bool ReceiptStore::holds(const std::string& run_id) const
{
    return std::any_of(m_kept.begin(), m_kept.end(), [&](const auto& k) { return k.run_id == run_id; });
}

}  // namespace pybox::daemon
