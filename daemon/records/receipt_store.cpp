#include "daemon/records/receipt_store.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "daemon/records/kept_file.hpp"
#include "proto/attempts.hpp"
#include "proto/receipt_signature.hpp"

#include <algorithm>
#include <system_error>

namespace pybox::daemon {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// The index entry of a receipt this daemon signed and keeps.
proto::KeptReceipt kept_receipt_entry(const proto::Receipt& receipt, std::uint32_t owner_uid, std::uint64_t bytes)
{
    const auto& termination = receipt.observed.termination;
    return proto::KeptReceipt{receipt.identity.run_id,
                              receipt.identity.created_at,
                              receipt.identity.image,
                              termination.exit_code,
                              std::string(proto::to_string(termination.mechanism)),
                              true,
                              bytes,
                              owner_uid,
                              std::nullopt};
}

bool older(const proto::KeptReceipt& a, const proto::KeptReceipt& b)
{
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.run_id < b.run_id;
}

Error no_such_receipt(const std::string& run_id)
{
    return make_error(api_error::k_no_such_receipt, "pyboxd keeps no receipt of run " + (proto::is_run_id(run_id) ? run_id : "(not a run id)") +
                                             " that you may see: it was never issued, could not be kept (pyboxd's "
                                             "log says so), is another user's, or was dropped as the oldest "
                                             "(`pybox receipts` lists what is kept).");
}

}  // namespace

ReceiptStore::ReceiptStore(fs::path folder, SigningKey key, Bounds bounds)
    : m_folder(std::move(folder)), m_key(std::move(key)), m_bounds(bounds)
{
}

ReceiptStore::ReceiptStore(fs::path folder, SigningKey key) : ReceiptStore(std::move(folder), std::move(key), Bounds{}) {}

fs::path ReceiptStore::file_of(const std::string& run_id) const { return m_folder / (run_id + ".json"); }

Expected<ReceiptStore::Kept> ReceiptStore::read_kept(const std::string& run_id) const
{
    const auto stamp = file_stamp(file_of(run_id));
    if (!stamp) return make_error(api_error::k_file_missing, file_of(run_id).string() + " is gone.");
    auto text = read_regular_file_capped(file_of(run_id), m_bounds.max_bytes, false);
    if (!text) return text.error();
    auto file = read_kept_file(*text, run_id, m_key.public_key());
    if (!file) return file.error();
    return Kept{std::move(file->entry), *stamp};
}

std::size_t ReceiptStore::load()
{
    m_kept.clear();
    m_bytes = 0;
    std::size_t foreign = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(m_folder, ec)) {
        const std::string name = entry.path().filename().string();
        const std::string run_id = name.size() > 5 ? name.substr(0, name.size() - 5) : std::string();
        auto kept = proto::is_run_id(run_id) && name.ends_with(".json")
                        ? read_kept(run_id)
                        : Expected<Kept>(make_error(api_error::k_file_unreadable, name));
        if (!kept) {
            ++foreign;
            continue;
        }
        keep(std::move(*kept));
    }
    apply_bounds();
    return foreign;
}

void ReceiptStore::refresh()
{
    for (auto kept = m_kept.begin(); kept != m_kept.end();) {
        const auto stamp = file_stamp(file_of(kept->entry.run_id));
        if (stamp && *stamp == kept->stamp) {
            ++kept;
            continue;
        }
        m_bytes -= kept->entry.bytes;
        if (!stamp) {
            kept = m_kept.erase(kept);
            continue;
        }
        if (auto again = read_kept(kept->entry.run_id)) {
            *kept = std::move(*again);
        } else {
            kept->entry.signed_receipt = false;
            kept->entry.problem = "Its file no longer reads as a kept receipt: " + again.error().message;
            kept->entry.bytes = stamp->size;
            kept->stamp = *stamp;
        }
        m_bytes += kept->entry.bytes;
        ++kept;
    }
}

void ReceiptStore::keep(Kept kept)
{
    if (auto same = std::find_if(m_kept.begin(), m_kept.end(), [&](const auto& k) { return k.entry.run_id == kept.entry.run_id; });
        same != m_kept.end()) {
        m_bytes -= same->entry.bytes;
        m_kept.erase(same);
    }
    m_bytes += kept.entry.bytes;
    const auto place = std::upper_bound(m_kept.begin(), m_kept.end(), kept,
                                        [](const Kept& a, const Kept& b) { return older(a.entry, b.entry); });
    m_kept.insert(place, std::move(kept));
}

void ReceiptStore::apply_bounds()
{
    std::size_t dropped = 0;
    while (dropped < m_kept.size() &&
           (m_kept.size() - dropped > m_bounds.max_receipts || m_bytes > m_bounds.max_bytes)) {
        const auto& oldest = m_kept[dropped++].entry;
        std::error_code ignored;
        fs::remove(file_of(oldest.run_id), ignored);
        m_bytes -= oldest.bytes;
    }
    m_kept.erase(m_kept.begin(), m_kept.begin() + static_cast<std::ptrdiff_t>(dropped));
}

Issuance ReceiptStore::issue(proto::Receipt receipt, std::uint32_t owner_uid)
{
    Issuance issuance{proto::issue_receipt(std::move(receipt), m_key), std::nullopt};
    if (auto kept = keep_issued(issuance.receipt, owner_uid); !kept) {
        m_not_kept.push_back({issuance.receipt.receipt().identity.run_id, owner_uid, kept.error().message});
        if (m_not_kept.size() > m_bounds.max_receipts) m_not_kept.pop_front();
        issuance.not_kept = kept.error();
    }
    return issuance;
}

Expected<void> ReceiptStore::keep_issued(const proto::IssuedReceipt& issued, std::uint32_t owner_uid)
{
    const proto::Receipt& receipt = issued.receipt();
    const std::string& run_id = receipt.identity.run_id;
    const std::string shown_id = proto::is_run_id(run_id) ? run_id : "(no run id)";
    if (const auto& not_signed = issued.not_signed())
        return make_error(not_signed->code, "pyboxd could not sign the receipt of run " + shown_id +
                                                ", so it did not keep it: " + not_signed->message);
    const auto not_kept = [&](const char* code, const std::string& why) {
        return make_error(code, "pyboxd signed the receipt of run " + shown_id + " but could not keep it: " + why);
    };
    if (!proto::is_run_id(run_id)) return not_kept(api_error::k_internal_error, "it has no run id.");
    // util::to_json_text's writing of {"owner_uid": N, "receipt": RECEIPT}, around the issued text.
    const std::string text =
        R"({"owner_uid":)" + std::to_string(owner_uid) + R"(,"receipt":)" + issued.text() + "}";
    if (text.size() > m_bounds.max_bytes)
        return not_kept(api_error::k_too_large, "it is larger than the " + std::to_string(m_bounds.max_bytes) +
                                                    " bytes the daemon keeps.");
    if (auto written = write_file_atomic(file_of(run_id), text); !written)
        return not_kept(api_error::k_file_unwritable, written.error().message);
    keep(Kept{kept_receipt_entry(receipt, owner_uid, text.size()), file_stamp(file_of(run_id)).value_or(FileStamp{})});
    apply_bounds();
    return {};
}

Expected<proto::ReceiptList> ReceiptStore::list(std::optional<std::uint32_t> viewer)
{
    refresh();
    proto::ReceiptList answer{{}, m_bounds.max_receipts, m_bounds.max_bytes};
    for (auto kept = m_kept.rbegin(); kept != m_kept.rend(); ++kept)
        if (!viewer || kept->entry.owner_uid == *viewer) answer.receipts.push_back(kept->entry);
    return answer;
}

Expected<json::value> ReceiptStore::get(const std::string& run_id, std::optional<std::uint32_t> viewer)
{
    const auto visible = [&](std::uint32_t owner_uid) { return !viewer || owner_uid == *viewer; };
    const auto kept = std::find_if(m_kept.begin(), m_kept.end(), [&](const auto& k) { return k.entry.run_id == run_id; });
    if (kept == m_kept.end() || !visible(kept->entry.owner_uid)) {
        const auto lost = std::find_if(m_not_kept.begin(), m_not_kept.end(), [&](const auto& n) { return n.run_id == run_id; });
        if (lost != m_not_kept.end() && visible(lost->owner_uid))
            return make_error(api_error::k_no_such_receipt, lost->why + " Only the run's answer carried it.");
        return no_such_receipt(run_id);
    }
    auto text = read_regular_file_capped(file_of(run_id), m_bounds.max_bytes, false);
    if (!text) return text.error();
    auto file = read_kept_file(*text, run_id, m_key.public_key());
    if (!file)
        return make_error(api_error::k_file_unreadable, file_of(run_id).string() + " no longer holds a kept receipt.");
    if (file->entry.problem)
        return make_error(api_error::k_receipt_not_verified, "The kept receipt of run " + run_id + " is not shown: " +
                                                                 *file->entry.problem + " The file is " +
                                                                 file_of(run_id).string() + ".");
    return std::move(file->receipt);
}

bool ReceiptStore::holds(const std::string& run_id) const
{
    return std::any_of(m_kept.begin(), m_kept.end(), [&](const auto& k) { return k.entry.run_id == run_id; });
}

}  // namespace pybox::daemon
