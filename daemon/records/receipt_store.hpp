// ReceiptStore: the receipts this daemon issued (docs/receipt.md "Signature", docs/reference.md
// "Files PyBox keeps"). issue() issues a finished run's receipt with the installation's key
// (proto::issue_receipt) and keeps it in <runtime>/receipts/<run id>.json, written through a
// temporary file and rename as {"owner_uid":N,"receipt":RECEIPT}, RECEIPT being the issued text
// byte for byte (the one the run's answer carries); then, oldest
// first (by identity.created_at), it drops receipts until at most Bounds::max_receipts files
// of at most Bounds::max_bytes in all are kept. An index of the kept files stays in memory,
// read by load() at start; a file that does not read as a kept receipt is left alone and not
// counted.
//
// What is kept is checked before it is listed or served (kept_file.hpp): list() reads again
// every file whose stamp (common/file_facts.hpp) changed since it was last read, and its entry
// says when the receipt's signature does not verify with the installation's key or the receipt
// is another run's; get() reads and checks the file each time and serves only a receipt that
// passes ("receipt_not_verified" otherwise). A receipt issue() could not keep (its Error says
// why) is remembered in memory, the newest Bounds::max_receipts of them, so get() says it was
// issued but not kept rather than never issued.
//
// Owns the signing key. Synchronous, on the daemon's io_context: one fsync'd write of a few
// hundred KiB at most per run, as the attempt notes are written, and a stat of every kept file
// per list(). Not thread-safe.
#pragma once

#include "common/file_facts.hpp"
#include "common/limits.hpp"
#include "common/signing_key.hpp"
#include "daemon/server/services.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

class ReceiptStore final : public ReceiptKeeper {
public:
    struct Bounds {
        std::size_t max_receipts = limits::k_max_kept_receipts;
        std::size_t max_bytes = limits::k_max_kept_receipt_bytes;
    };

    // `folder` exists and is private (RuntimePaths::ensure_private makes receipts/).
    ReceiptStore(std::filesystem::path folder, SigningKey key, Bounds bounds);
    ReceiptStore(std::filesystem::path folder, SigningKey key);  // limits.hpp's bounds

    // Reads the index of what the folder keeps, then applies the bounds (they may have shrunk).
    // Returns how many files were not kept receipts.
    std::size_t load();

    // not_kept says what was done: "signed ... but could not keep it: WHY", or could not sign.
    Issuance issue(proto::Receipt receipt, std::uint32_t owner_uid) override;
    Expected<proto::ReceiptList> list(std::optional<std::uint32_t> viewer) override;
    Expected<boost::json::value> get(const std::string& run_id, std::optional<std::uint32_t> viewer) override;
    bool holds(const std::string& run_id) const override;

    std::uint64_t kept_bytes() const { return m_bytes; }

private:
    // One kept file: its entry as last read, and its stamp then.
    struct Kept {
        proto::KeptReceipt entry;
        FileStamp stamp;
    };
    // A receipt issued but not kept.
    struct NotKept {
        std::string run_id;
        std::uint32_t owner_uid = 0;
        std::string why;
    };

    Expected<void> keep_issued(const proto::IssuedReceipt& issued, std::uint32_t owner_uid);
    Expected<Kept> read_kept(const std::string& run_id) const;
    void refresh();
    void keep(Kept kept);
    void apply_bounds();
    std::filesystem::path file_of(const std::string& run_id) const;

    std::filesystem::path m_folder;
    SigningKey m_key;
    Bounds m_bounds;
    std::vector<Kept> m_kept;  // oldest first
    std::uint64_t m_bytes = 0;
    std::deque<NotKept> m_not_kept;  // oldest first
};

}  // namespace pybox::daemon
