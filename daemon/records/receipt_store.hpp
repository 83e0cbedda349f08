// ReceiptStore: the receipts this daemon issued (docs/receipt.md "Signature", docs/reference.md
// "Files PyBox keeps"). issue() signs a finished run's receipt with the installation's key
// (proto/receipt_signature.hpp) and keeps it in <runtime>/receipts/<run id>.json, written
// through a temporary file and rename as {"owner_uid": N, "receipt": RECEIPT}; then, oldest
// first (by identity.created_at), it drops receipts until at most Bounds::max_receipts files
// of at most Bounds::max_bytes in all are kept. An index of the kept files stays in memory,
// read by load() at start; a file that does not read as a kept receipt is left alone and not
// counted.
//
// Owns the signing key. Synchronous, on the daemon's io_context: one fsync'd write of a few
// hundred KiB at most per run, as the attempt notes are written. Not thread-safe.
#pragma once

#include "common/limits.hpp"
#include "common/signing_key.hpp"
#include "daemon/server/services.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
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

    Expected<void> issue(proto::Receipt& receipt, std::uint32_t owner_uid) override;
    Expected<proto::ReceiptList> list(std::optional<std::uint32_t> viewer) override;
    Expected<boost::json::value> get(const std::string& run_id, std::optional<std::uint32_t> viewer) override;
    bool holds(const std::string& run_id) const override;

    std::uint64_t kept_bytes() const { return m_bytes; }

private:
    void keep(proto::KeptReceipt kept);
    void apply_bounds();
    std::filesystem::path file_of(const std::string& run_id) const;

    std::filesystem::path m_folder;
    SigningKey m_key;
    Bounds m_bounds;
    std::vector<proto::KeptReceipt> m_kept;  // oldest first
    std::uint64_t m_bytes = 0;
};

}  // namespace pybox::daemon
