// JournalAttemptRecords: GET /v1/attempts from the attempt notes (attempts.hpp) and the attempt
// journal (attempt_journal.hpp). Bounded: at most k_attempts_answer_max_unsettled notes (the
// newest by created_at) and k_attempts_answer_max_settled journal entries; a settled entry whose
// run's receipt is kept links to it (`receipt`: the run id). Borrows the RunsInProgress and the
// ReceiptKeeper (none: no links), which must outlive it; synchronous, on the daemon's io_context.
#pragma once

#include "daemon/records/attempt_journal.hpp"
#include "daemon/records/attempts.hpp"
#include "daemon/server/services.hpp"

namespace pybox::daemon {

class JournalAttemptRecords final : public AttemptRecords {
public:
    JournalAttemptRecords(AttemptLog attempts, AttemptJournal journal, const RunsInProgress& in_progress,
                          const ReceiptKeeper* receipts = nullptr)
        : m_attempts(std::move(attempts)), m_journal(std::move(journal)), m_in_progress(in_progress),
          m_receipts(receipts)
    {
    }

    Expected<proto::AttemptsAnswer> list(std::optional<std::uint32_t> viewer) override;

private:
    AttemptLog m_attempts;
    AttemptJournal m_journal;
    const RunsInProgress& m_in_progress;
    const ReceiptKeeper* m_receipts;
};

}  // namespace pybox::daemon
